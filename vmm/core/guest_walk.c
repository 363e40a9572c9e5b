// SPDX-License-Identifier: MIT
/*
 * guest_walk.c: reading guest-virtual memory from the host, for call
 * chains (`vpmu record -g`): x86-64 4-level paging rooted at the guest's
 * CR3, and the frame-pointer chain of a stopped vCPU.
 *
 * Everything read comes from guest memory, which the guest (and its other
 * vCPUs, concurrently) controls: every table entry and every frame is
 * copied once and bounds-checked against guest RAM; anything bad ends the
 * walk with an error, never the VMM.
 */
#include "vmm_core.h"

#include <errno.h>
#include <string.h>

#define PTE_P      (1ULL << 0)
#define PTE_PS     (1ULL << 7)
#define PTE_ADDR   0x000ffffffffff000ULL /* bits 51:12 */
#define PAGE_4K    4096ULL
#define FRAMES_GAP (1ULL << 20)  /* at most 1 MiB between two frames */
#define LEAF_MAX   (64ULL << 10) /* a leaf's sample at most 64 KiB in */
#define OP_CALL    0xe8          /* call rel32 */
#define OP_PUSH_BP 0x55          /* push %rbp */

static bool canonical(uint64_t va)
{
	uint64_t top = va >> 47; /* bits 63:47 all equal */

	return top == 0 || top == 0x1ffff;
}

/* Copy (len) bytes at guest-physical (gpa), bounds-checked. */
static int phys_read(const struct vmm_gmem_view *m, uint64_t gpa, void *dst,
		     size_t len)
{
	if (gpa > m->size || len > m->size - gpa)
		return -EFAULT;
	memcpy(dst, m->base + gpa, len);
	return 0;
}

int vmm_gva_to_gpa(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t va,
		   uint64_t *gpa)
{
	uint64_t table = cr3 & PTE_ADDR, e = 0;
	int level;

	if (!canonical(va))
		return -EFAULT;
	/* Levels 4 (PML4) to 1 (PT); bits 47:39, 38:30, 29:21, 20:12. */
	for (level = 4; level >= 1; level--) {
		unsigned int shift = 12 + 9 * (unsigned int)(level - 1);
		uint64_t idx       = (va >> shift) & 511;

		if (phys_read(m, table + idx * 8, &e, sizeof(e)) ||
		    !(e & PTE_P))
			return -EFAULT;
		/* 1 GiB (PDPTE) or 2 MiB (PDE) page: the rest is offset. */
		if ((level == 3 || level == 2) && (e & PTE_PS)) {
			uint64_t size = 1ULL << shift;

			*gpa = ((e & PTE_ADDR) & ~(size - 1)) |
			       (va & (size - 1));
			return *gpa < m->size ? 0 : -EFAULT;
		}
		if (level == 4 && (e & PTE_PS))
			return -EFAULT; /* reserved in a PML4E */
		table = e & PTE_ADDR;
	}
	*gpa = table | (va & (PAGE_4K - 1));
	return *gpa < m->size ? 0 : -EFAULT;
}

int vmm_gva_read(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t va,
		 void *dst, size_t len)
{
	unsigned char *out = dst;
	uint64_t gpa;
	size_t n;
	int ret;

	while (len) {
		n = (size_t)(PAGE_4K - (va & (PAGE_4K - 1)));
		if (n > len)
			n = len;
		ret = vmm_gva_to_gpa(m, cr3, va, &gpa);
		if (!ret)
			ret = phys_read(m, gpa, out, n);
		if (ret)
			return ret;
		out += n;
		va += n;
		len -= n;
	}
	return 0;
}

unsigned int vmm_fp_unwind(const struct vmm_gmem_view *m, uint64_t cr3,
			   uint64_t rbp, uint64_t rsp, uint64_t *out,
			   unsigned int max)
{
	uint64_t frame[2], low = rsp;
	unsigned int n = 0;

	/* frame[0] is the caller's rbp, frame[1] the return address. */
	while (n < max && rbp && !(rbp & 7) && rbp >= low &&
	       rbp - low <= FRAMES_GAP &&
	       !vmm_gva_read(m, cr3, rbp, frame, sizeof(frame))) {
		if (!frame[1] || !canonical(frame[1]))
			break;
		out[n++] = frame[1];
		/* The stack grows down: callers' frames lie strictly above. */
		if (frame[0] <= rbp)
			break;
		low = rbp + sizeof(frame);
		rbp = frame[0];
	}
	return n;
}

bool vmm_leaf_caller(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t rip,
		     uint64_t rsp, uint64_t *ret)
{
	unsigned char call[5], op;
	uint64_t r, target;
	int32_t rel;

	/* R = [rsp] must be the address right after a direct call... */
	if ((rsp & 7) || vmm_gva_read(m, cr3, rsp, &r, sizeof(r)) || r < 5 ||
	    !canonical(r) || vmm_gva_read(m, cr3, r - 5, call, sizeof(call)) ||
	    call[0] != OP_CALL)
		return false;
	memcpy(&rel, call + 1, sizeof(rel));
	target = r + (uint64_t)(int64_t)rel;
	/* ...of the function rip is in (at most LEAF_MAX past its start)... */
	if (rip < target || rip - target >= LEAF_MAX ||
	    vmm_gva_read(m, cr3, target, &op, 1))
		return false;
	/* ...which has no frame, or has not built it yet (rip at entry). */
	if (op == OP_PUSH_BP && rip != target)
		return false;
	*ret = r;
	return true;
}
