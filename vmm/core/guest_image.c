// SPDX-License-Identifier: MIT
/*
 * guest_image.c: reading a guest image file and telling what it is: vpmu's
 * freestanding ELF, a Linux vmlinux (an ELF whose notes carry the "Linux"
 * owner every kernel since 4.17 has, LINUX_ELFNOTE_BUILD_SALT) or a Linux
 * bzImage (the "HdrS" setup header at 0x202). Pure but for the file.
 */
#include "vmm_core.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vpmu_common.h>
#include <vpmu_file.h>

#define IMAGE_FILE_MAX   (1ULL << 30)
#define BZ_HDRS_OFFSET   0x202
#define BZ_HEADER_END    0x270 /* through init_size and kernel_info */
#define LINUX_NOTE_OWNER "Linux"
#define NOTE_ALIGN(n)    (((n) + 3U) & ~3U)

static const char *const kind_names[] = {
	[VMM_IMAGE_ELF]     = "freestanding ELF",
	[VMM_IMAGE_VMLINUX] = "Linux vmlinux",
	[VMM_IMAGE_BZIMAGE] = "Linux bzImage",
};

const char *vmm_image_kind_name(enum vmm_image_kind kind)
{
	if ((size_t)kind < ARRAY_SIZE(kind_names) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

/* Does the note segment [p, p + len) hold a note owned by "Linux"? */
static bool has_linux_note(const uint8_t *p, uint64_t len)
{
	Elf64_Nhdr n; /* copied: the file need not align it */
	uint64_t size;

	while (len >= sizeof(n)) {
		memcpy(&n, p, sizeof(n));
		size = sizeof(n) + (uint64_t)NOTE_ALIGN(n.n_namesz) +
		       NOTE_ALIGN(n.n_descsz);

		if (n.n_namesz > len || n.n_descsz > len || size > len)
			return false;
		if (n.n_namesz == sizeof(LINUX_NOTE_OWNER) &&
		    memcmp(p + sizeof(n), LINUX_NOTE_OWNER,
			   sizeof(LINUX_NOTE_OWNER)) == 0)
			return true;
		p += size;
		len -= size;
	}
	return false;
}

static bool elf_is_linux(const uint8_t *file, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)file;
	uint64_t i, phend;

	if (size < sizeof(*eh) || eh->e_phentsize != sizeof(Elf64_Phdr))
		return false;
	phend = eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phoff > size || phend > size)
		return false;
	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph; /* copied: e_phoff need not be aligned */

		memcpy(&ph, file + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE && ph.p_offset <= size &&
		    ph.p_filesz <= size - ph.p_offset &&
		    has_linux_note(file + ph.p_offset, ph.p_filesz))
			return true;
	}
	return false;
}

int vmm_image_detect(const void *file, size_t size, enum vmm_image_kind *kind,
		     char *err, size_t errlen)
{
	const uint8_t *b = file;
	uint32_t hdrs;

	if (size >= SELFMAG && memcmp(b, ELFMAG, SELFMAG) == 0) {
		*kind = elf_is_linux(b, size) ? VMM_IMAGE_VMLINUX
					      : VMM_IMAGE_ELF;
		return 0;
	}
	if (size >= BZ_HEADER_END) {
		memcpy(&hdrs, b + BZ_HDRS_OFFSET, sizeof(hdrs));
		if (hdrs == 0x53726448U) { /* "HdrS" */
			*kind = VMM_IMAGE_BZIMAGE;
			return 0;
		}
	}
	snprintf(err, errlen,
		 "not a guest image: neither an ELF64 executable (vpmu's "
		 "freestanding ELF or a Linux vmlinux) nor a Linux bzImage");
	return -ENOEXEC;
}

int vmm_image_map(const char *path, struct vmm_image_file *f, char *err,
		  size_t errlen)
{
	struct stat st;
	int fd, ret = 0;

	fd = vpmu_file_open(path, O_RDONLY, 0, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (st.st_size == 0 || (uint64_t)st.st_size > IMAGE_FILE_MAX) {
		snprintf(err, errlen, "%s: size %lld is not a guest image",
			 path, (long long)st.st_size);
		ret = -ENOEXEC;
		goto out_close;
	}
	f->data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->data == MAP_FAILED) {
		ret     = -errno;
		f->data = NULL;
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		goto out_close;
	}
	f->size = st.st_size;
out_close:
	close(fd);
	return ret;
}

void vmm_image_unmap(struct vmm_image_file *f)
{
	if (f->data)
		munmap((void *)f->data, f->size);
	f->data = NULL;
	f->size = 0;
}
