# install.cmake: what `cmake --install build --prefix PREFIX` installs
# besides the guest SDK (guest/sdk/linux): the two programs, the run-time
# sampling formats where the programs look for them (relative to their own
# folder, vmm_config_installed_format_dir), the systemd unit of
# `vpmu serve` with PREFIX's paths, man pages and the operator docs.
# tests/install checks an install made to a temporary prefix.

install(TARGETS vpmu_cmd vpmu_vmm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS vpmu_fmt_lastn LIBRARY DESTINATION ${VPMU_FORMATS_INSTALL_DIR})

# The unit names the programs by PREFIX, known only when installing
# (--prefix overrides CMAKE_INSTALL_PREFIX then): configured by the
# install script itself.
set(VPMU_UNIT_IN ${PROJECT_SOURCE_DIR}/ops/serve/vpmu-serve.service.in)
set(VPMU_UNIT ${PROJECT_BINARY_DIR}/ops/serve/vpmu-serve.service)
install(CODE "
	set(VPMU_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
	set(VPMU_DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
	configure_file(\"${VPMU_UNIT_IN}\" \"${VPMU_UNIT}\" @ONLY)
")
install(FILES ${VPMU_UNIT} DESTINATION lib/systemd/system)
install(FILES README.md ops/OPERATORS.md docs/operators.md
	docs/perf-comparison.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages: help2man runs `vpmu --help` and `vpmu CMD --help` (the
# usage cli_parse prints from each command's option table), so a page
# lists exactly what the program accepts.
find_program(HELP2MAN help2man)
set(VPMU_MAN_COMMANDS run events list stat record report top snapshot serve)
if(HELP2MAN)
	set(man_pages)
	set(man_dir ${PROJECT_BINARY_DIR}/man)
	foreach(page vpmu ${VPMU_MAN_COMMANDS})
		if(page STREQUAL "vpmu")
			set(help_opt "--help")
			set(name "a KVM VMM built around a perfmon2 logical PMU")
		else()
			set(help_opt "${page} --help")
			set(name "vpmu ${page}")
			set(page vpmu-${page})
		endif()
		add_custom_command(OUTPUT ${man_dir}/${page}.1
			COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
			COMMAND ${HELP2MAN} --no-info --no-discard-stderr
				--section=1 --name=${name}
				--help-option=${help_opt}
				--version-option=--version
				--output=${man_dir}/${page}.1
				$<TARGET_FILE:vpmu_cmd>
			DEPENDS vpmu_cmd VERBATIM)
		list(APPEND man_pages ${man_dir}/${page}.1)
	endforeach()
	add_custom_target(vpmu_man ALL DEPENDS ${man_pages})
	install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
	message(STATUS "help2man not found: no man pages (scripts/setup.sh "
		"installs it)")
endif()
