// SPDX-License-Identifier: MIT
/*
 * disk_module.c: the disks of a Linux guest as virtio-mmio devices (see
 * vmm_disk.h): opened and declared on the command line when the VM is
 * created, their MMIO exits served on the vCPU thread, freed with the VM.
 */
#include "vmm_disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm_machine.h"
#include "vmm_virtio.h"

#include <vpmu_file.h>

const unsigned int vmm_disk_irq[VMM_DISKS_MAX] = {5, 6, 7, 9};

struct disk {
	struct vmm_vm *vm;
	unsigned int irq;
	uint64_t base;
	int fd;
	struct vmm_virtio_dev *dev;
};

struct disks {
	unsigned int nr;
	struct disk d[VMM_DISKS_MAX];
};

static void *disk_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	const struct disk *d = opaque;

	return vmm_gpa_ptr(d->vm, gpa, len);
}

/*
 * The ISA lines are edge-triggered in the MP table: one edge for every
 * interrupt the device raises, the driver then reads InterruptStatus.
 */
static void disk_irq(void *opaque, bool level)
{
	const struct disk *d = opaque;

	if (!level)
		return;
	vmm_irq_line(d->vm, d->irq, true);
	vmm_irq_line(d->vm, d->irq, false);
}

static void disks_free(struct vmm_vm *vm)
{
	struct disks *ds = vmm_vm_module_priv(vm, &vmm_disk_module);
	unsigned int i;

	if (!ds)
		return;
	for (i = 0; i < ds->nr; i++) {
		vmm_virtio_dev_destroy(ds->d[i].dev);
		close(ds->d[i].fd);
	}
	free(ds);
	vmm_vm_set_module_priv(vm, &vmm_disk_module, NULL);
}

/* Open disk (i) of (cfg) and make its device; a message in (err). */
static int disk_open(struct vmm_vm *vm, struct disks *ds,
		     const struct vmm_disk_config *c, char *err, size_t errlen)
{
	struct disk *d                  = &ds->d[ds->nr];
	struct vmm_virtio_blk_params bp = {.read_only = c->read_only};
	struct vmm_virtio_host host     = {
		    .gpa_ptr = disk_gpa_ptr, .irq = disk_irq, .opaque = d};
	char serial[VMM_VIRTIO_BLK_SERIAL_MAX + 1], words[96];
	int ret;

	if (c->from_dir) { /* `vpmu run` makes the image (vm_config.h) */
		snprintf(err, errlen, "disk %s: a folder, not an image",
			 c->path);
		return -EINVAL;
	}
	d->vm   = vm;
	d->irq  = vmm_disk_irq[ds->nr];
	d->base = VMM_DISK_MMIO_BASE + ds->nr * VMM_VIRTIO_MMIO_SIZE;
	/* Checked again once open: the path may have changed since. */
	d->fd = vpmu_file_open(c->path, c->read_only ? O_RDONLY : O_RDWR,
			       VPMU_FILE_OR_BLOCKDEV, NULL, err, errlen);
	if (d->fd < 0) {
		ret   = d->fd;
		d->fd = -1;
		return ret;
	}
	if (c->remove_after_open) /* a scratch image of a folder */
		unlink(c->path);
	snprintf(serial, sizeof(serial), "vpmu-disk%u", ds->nr);
	bp.fd     = d->fd;
	bp.serial = serial;
	ret       = vmm_virtio_blk_create(&bp, &host, &d->dev);
	if (ret) {
		snprintf(err, errlen, "disk %s: %s", c->path,
			 ret == -EINVAL ? "smaller than one 512-byte sector"
					: strerror(-ret));
		goto out_close;
	}
	ret = vmm_virtio_mmio_cmdline(words, sizeof(words), d->base, d->irq);
	if (ret > 0)
		ret = vmm_vm_add_linux_params(vm, words);
	if (ret < 0) {
		snprintf(err, errlen, "disk %s: the command line is full",
			 c->path);
		goto out_destroy;
	}
	ds->nr++;
	return 0;

out_destroy:
	vmm_virtio_dev_destroy(d->dev);
out_close:
	close(d->fd);
	return ret;
}

static int disks_init(struct vmm_vm *vm, const struct vmm_config *cfg,
		      char *err, size_t errlen)
{
	struct disks *ds;
	unsigned int i;
	int ret = 0;

	if (!cfg->nr_disks)
		return 0;
	if (vmm_vm_image_kind(vm) == VMM_IMAGE_ELF) {
		snprintf(err, errlen,
			 "%s: disks are for Linux images (vpmu's own guests "
			 "have no block driver)",
			 cfg->image);
		return -EINVAL;
	}
	ds = calloc(1, sizeof(*ds));
	if (!ds)
		return -ENOMEM;
	vmm_vm_set_module_priv(vm, &vmm_disk_module, ds);
	vmm_vm_refuse_snapshots(vm, "its disks' device state would not be "
				    "saved (virtio queues in flight)");
	for (i = 0; !ret && i < cfg->nr_disks; i++)
		ret = disk_open(vm, ds, &cfg->disks[i], err, errlen);
	/* The first disk is the root unless an initrd or the user says. */
	if (!ret && !cfg->initrd[0])
		ret = vmm_vm_add_linux_params(vm, "root=/dev/vda");
	return ret; /* vm_free frees what was opened */
}

static bool disks_mmio(struct vmm_vcpu *vcpu)
{
	struct disks *ds    = vmm_vm_module_priv(vcpu->vm, &vmm_disk_module);
	struct kvm_run *run = vcpu->run;
	uint64_t gpa        = run->mmio.phys_addr, i;

	if (!ds || gpa < VMM_DISK_MMIO_BASE)
		return false;
	i = (gpa - VMM_DISK_MMIO_BASE) / VMM_VIRTIO_MMIO_SIZE;
	if (i >= ds->nr)
		return false;
	/* An access the transport does not define reads 0 (see its header). */
	vmm_virtio_mmio_access(ds->d[i].dev, gpa - ds->d[i].base,
			       run->mmio.is_write, run->mmio.data,
			       run->mmio.len);
	return true;
}

const struct vmm_module vmm_disk_module = {
	.name    = "disk",
	.vm_init = disks_init,
	.vm_free = disks_free,
	.mmio    = disks_mmio,
};
