# vmm/config.cmake: the VM configuration reader (command line and libvirt
# domain XML), a library of its own so unit tests link it without the VMM.
add_library(vmm_config STATIC config.c config_cli.c config_xml.c
	config_meta.c)
target_include_directories(vmm_config PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(vmm_config PUBLIC PkgConfig::LIBXML2 PkgConfig::UUID
	PRIVATE vpmu_host_options)
