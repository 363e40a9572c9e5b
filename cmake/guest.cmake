# guest.cmake: build freestanding x86-64 guest images with the host compiler.
#
# Guest code has no libc, is not position independent, is linked static at
# the fixed address of guest/kernel/guest.ld, and never uses the red
# zone (interrupts arrive on the same stack in ring 0). It keeps frame
# pointers (`vpmu record -g` walks them from the host) and a GNU build-id
# (`vpmu report` checks it against the one recorded).

set(VPMU_GUEST_CFLAGS
	-ffreestanding -fno-pic -fno-pie -mno-red-zone -fno-stack-protector
	-fno-asynchronous-unwind-tables -fno-builtin -fcf-protection=none
	-mgeneral-regs-only -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
	-O2 -g)
set(VPMU_GUEST_LDFLAGS -nostdlib -static -no-pie -Wl,--build-id=sha1
	-Wl,-z,noexecstack -Wl,-z,max-page-size=4096)
set(VPMU_GUEST_LDS ${CMAKE_SOURCE_DIR}/guest/kernel/guest.ld)

# vpmu_guest_library(NAME SRC...): a static library of guest code.
function(vpmu_guest_library name)
	add_library(${name} STATIC ${ARGN})
	target_compile_options(${name} PRIVATE ${VPMU_GUEST_CFLAGS})
	target_link_libraries(${name} PUBLIC pvpmu_abi)
endfunction()

# vpmu_guest_image(NAME SRC... [LIBS lib...]): a guest ELF image NAME.elf
# placed in ${CMAKE_BINARY_DIR}/guests/.
function(vpmu_guest_image name)
	cmake_parse_arguments(G "" "" "LIBS" ${ARGN})
	add_executable(${name} ${G_UNPARSED_ARGUMENTS})
	target_compile_options(${name} PRIVATE ${VPMU_GUEST_CFLAGS})
	target_link_options(${name} PRIVATE ${VPMU_GUEST_LDFLAGS}
		-Wl,-T,${VPMU_GUEST_LDS})
	target_link_libraries(${name} PRIVATE ${G_LIBS} guest_kernel pvpmu_abi)
	set_target_properties(${name} PROPERTIES
		SUFFIX ".elf"
		LINK_DEPENDS ${VPMU_GUEST_LDS}
		RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/guests)
endfunction()
