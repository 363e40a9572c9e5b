// SPDX-License-Identifier: MIT
/*
 * snapshot_save.c: taking a snapshot of a running VM: the
 * request from the control thread, the main thread that serves it, the
 * pause of every vCPU and the file (vmm_snapshot.h says who does what).
 */
#include "vmm_core_priv.h"
#include "vmm_snapshot.h"
#include "snapshot_priv.h"
#include "vmm_snap.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAUSE_WAIT_NS (5ULL * 1000000000ULL)

void vmm_snapshot_host_vendor(char out[13])
{
	unsigned int a, b, c, d;

	memset(out, 0, 13);
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	memcpy(out, &b, 4);
	memcpy(out + 4, &d, 4);
	memcpy(out + 8, &c, 4);
}

const struct vmm_snapshot_hooks *vmm_snapshot_hooks(const struct vmm_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->snapshot)
			return vm->mods[i]->snapshot;
	}
	return NULL;
}

const char *vmm_snapshot_model(const struct vmm_vm *vm)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vm);

	return h && h->model ? h->model(vm) : "none";
}

int vmm_snapshot_init(struct vmm_vm *vm)
{
	struct vmm_snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->vcpu = calloc(vm->nr_vcpus, sizeof(*s->vcpu));
	if (!s->vcpu) {
		free(s);
		return -ENOMEM;
	}
	vm->snap = s;
	return 0;
}

void vmm_snapshot_free(struct vmm_vm *vm)
{
	struct vmm_snapshot *s = vm->snap;
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < vm->nr_vcpus; i++)
		free(s->vcpu[i].state);
	free(s->vcpu);
	free(s->msrs);
	free(s);
	vm->snap = NULL;
}

bool vmm_snapshot_vcpu_restored_halted(struct vmm_vcpu *vcpu)
{
	struct vmm_snapshot *s = vcpu->vm->snap;
	bool h                 = s && s->vcpu[vcpu->index].restored_halted;

	if (h)
		s->vcpu[vcpu->index].restored_halted = false;
	return h;
}

void vmm_snapshot_vcpu_pause(struct vmm_vcpu *vcpu, bool halted)
{
	struct vmm_vm *vm         = vcpu->vm;
	struct vmm_snapshot *s    = vm->snap;
	struct snap_vcpu_slot *sl = &s->vcpu[vcpu->index];
	struct snap_vcpu *st      = NULL;
	size_t len                = 0;
	int ret;

	pthread_mutex_lock(&vm->lock);
	if (!s->pausing) { /* a late kick: the snapshot is over */
		pthread_mutex_unlock(&vm->lock);
		return;
	}
	pthread_mutex_unlock(&vm->lock);
	ret = vmm_snapshot_vcpu_save(vcpu, s->msrs, s->nr_msrs, halted, &st,
				     &len);
	pthread_mutex_lock(&vm->lock);
	free(sl->state);
	sl->state = st;
	sl->len   = len;
	sl->ret   = ret;
	s->nr_paused++;
	pthread_cond_broadcast(&vm->cond);
	while (s->pausing && !vm->stopping)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
}

/* KVM's list of MSRs to save, once per VM. */
static int msr_list(struct vmm_vm *vm)
{
	struct vmm_snapshot *s    = vm->snap;
	struct kvm_msr_list probe = {.nmsrs = 0}, *l;
	int ret                   = 0;

	if (s->msrs)
		return 0;
	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 &&
	    errno != E2BIG)
		return -errno;
	l = calloc(1, sizeof(*l) + probe.nmsrs * sizeof(l->indices[0]));
	if (!l)
		return -ENOMEM;
	l->nmsrs = probe.nmsrs;
	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		ret = -errno;
		free(l);
		return ret;
	}
	s->msrs = malloc(l->nmsrs * sizeof(*s->msrs) + 1);
	if (s->msrs) {
		memcpy(s->msrs, l->indices, l->nmsrs * sizeof(*s->msrs));
		s->nr_msrs = l->nmsrs < SNAP_VCPU_MAX_MSRS ? l->nmsrs
							   : SNAP_VCPU_MAX_MSRS;
	}
	free(l);
	return s->msrs ? 0 : -ENOMEM;
}

static void set_pausing(struct vmm_vm *vm, bool on)
{
	pthread_mutex_lock(&vm->lock);
	vm->snap->pausing   = on;
	vm->snap->nr_paused = 0;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}

/* Kick every vCPU to pause; wait until all saved their state. */
static int pause_all(struct vmm_vm *vm, char *err, size_t errlen)
{
	struct vmm_snapshot *s = vm->snap;
	uint64_t deadline      = vpmu_monotonic_ns() + PAUSE_WAIT_NS;
	struct timespec ts;
	unsigned int i;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += PAUSE_WAIT_NS / 1000000000ULL;
	set_pausing(vm, true);
	for (i = 0; i < vm->nr_vcpus; i++)
		vmm_vcpu_kick(&vm->vcpus[i], VMM_REQ_PAUSE);
	pthread_mutex_lock(&vm->lock);
	while (s->nr_paused < vm->nr_vcpus && !vm->stopping &&
	       vpmu_monotonic_ns() < deadline)
		pthread_cond_timedwait(&vm->cond, &vm->lock, &ts);
	if (vm->stopping) {
		snprintf(err, errlen, "the VM stopped during the snapshot");
		ret = -ESHUTDOWN;
	} else if (s->nr_paused < vm->nr_vcpus) {
		snprintf(err, errlen,
			 "only %u of %u vCPUs paused within 5 s (a vCPU "
			 "waiting for a perfmon2 message cannot pause)",
			 s->nr_paused, vm->nr_vcpus);
		ret = -ETIMEDOUT;
	}
	for (i = 0; !ret && i < vm->nr_vcpus; i++) {
		if (s->vcpu[i].ret) {
			ret = s->vcpu[i].ret;
			snprintf(err, errlen, "vCPU %u: saving its state: %s",
				 i, strerror(-ret));
		}
	}
	pthread_mutex_unlock(&vm->lock);
	return ret;
}

static void fill_vm(struct vmm_vm *vm, struct snap_vm *sv)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vm);

	memset(sv, 0, sizeof(*sv));
	sv->version    = SNAP_VM_VERSION;
	sv->image_kind = vm->image_kind;
	sv->mem_size   = vm->mem_size;
	sv->entry      = vm->entry;
	sv->nr_vcpus   = vm->nr_vcpus;
	snprintf(sv->name, sizeof(sv->name), "%s", vm->name);
	memcpy(sv->uuid, vm->uuid, 16);
	snprintf(sv->pmu_model, sizeof(sv->pmu_model), "%s",
		 vmm_snapshot_model(vm));
	if (h && h->maps)
		sv->nr_maps = h->maps(vm, sv->maps, VMM_SNAP_MAPS_MAX);
}

static void fill_devices(struct vmm_vm *vm, struct snap_devices *d)
{
	struct vmm_uart *u = &vm->uart;

	pthread_mutex_lock(&u->lock);
	*d = (struct snap_devices){.ier          = u->ier,
				   .lcr          = u->lcr,
				   .mcr          = u->mcr,
				   .scr          = u->scr,
				   .dll          = u->dll,
				   .dlm          = u->dlm,
				   .fcr          = u->fcr,
				   .thre_pending = u->thre_pending};
	pthread_mutex_unlock(&u->lock);
}

/* Everything paused: write the file (tmp name, then rename). */
static int write_file(struct vmm_vm *vm, const char *path, const void *blob,
		      size_t blob_len, struct vmm_snapshot_result *res,
		      char *err, size_t errlen)
{
	struct vmm_snap_hdr h = {.mem_size = vm->mem_size,
				 .nr_vcpus = vm->nr_vcpus};
	struct vmm_snap_writer w;
	struct snap_devices dev;
	struct snap_vm sv;
	char tmp[4200], vendor[13];
	struct stat st;
	unsigned int i;
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%.200s: %s", tmp, strerror(-ret));
		return ret;
	}
	vmm_snapshot_host_vendor(vendor);
	memcpy(h.vendor, vendor, 12);
	snprintf(h.pmu_model, sizeof(h.pmu_model), "%s",
		 vmm_snapshot_model(vm));
	fill_vm(vm, &sv);
	fill_devices(vm, &dev);
	vmm_snap_write_begin(&w, fd, &h);
	vmm_snap_write_sect(&w, VMM_SNAP_VM, 0, &sv, sizeof(sv));
	for (i = 0; i < vm->nr_vcpus; i++)
		vmm_snap_write_sect(&w, VMM_SNAP_VCPU, i,
				    vm->snap->vcpu[i].state,
				    vm->snap->vcpu[i].len);
	vmm_snap_write_sect(&w, VMM_SNAP_DEVICES, 0, &dev, sizeof(dev));
	vmm_snap_write_sect(&w, VMM_SNAP_VPMU, 0, blob, blob_len);
	vmm_snap_write_memory(&w, vm->mem, vm->mem_size, &res->mem_pages);
	ret = vmm_snap_write_end(&w);
	if (!ret && fstat(fd, &st) == 0)
		res->file_bytes = (uint64_t)st.st_size;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		snprintf(err, errlen, "%.200s: %s", path, strerror(-ret));
	}
	return ret;
}

static int take(struct vmm_vm *vm, const char *path, bool stop,
		struct vmm_snapshot_result *res, char *err, size_t errlen)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vm);
	uint64_t t0                        = vpmu_monotonic_ns(), t1;
	void *blob                         = NULL;
	size_t len                         = 0;
	int ret;

	if (vm->irqchip || vm->image_kind != VMM_IMAGE_ELF) {
		snprintf(err, errlen,
			 "Linux guests cannot be snapshotted yet: KVM's "
			 "irqchip, PIT and kvm-clock are not saved "
			 "(docs/snapshot-format.md)");
		return -ENOTSUP;
	}
	ret = msr_list(vm);
	if (ret) {
		snprintf(err, errlen, "KVM_GET_MSR_INDEX_LIST: %s",
			 strerror(-ret));
		return ret;
	}
	ret = pause_all(vm, err, errlen);
	if (!ret && h && h->save)
		ret = h->save(vm, &blob, &len, &res->dropped, err, errlen);
	t1 = vpmu_monotonic_ns();
	if (!ret)
		ret = write_file(vm, path, blob, len, res, err, errlen);
	free(blob);
	res->write_ns = vpmu_monotonic_ns() - t1;
	if (!ret && stop) {
		res->stopped = true;
		vmm_vm_stop(vm, VMM_STATUS_STOPPED);
	}
	set_pausing(vm, false); /* resume (or let them see the stop) */
	res->pause_ns = vpmu_monotonic_ns() - t0;
	if (!ret)
		vmm_log(vm, VMM_LOG_INFO,
			"snapshot %s: %llu bytes, %llu pages, paused %.1f ms%s",
			path, (unsigned long long)res->file_bytes,
			(unsigned long long)res->mem_pages, res->pause_ns / 1e6,
			stop ? ", stopped" : "");
	return ret;
}

void vmm_snapshot_serve(struct vmm_vm *vm)
{
	struct vmm_snapshot *s = vm->snap;

	if (!s)
		return;
	pthread_mutex_lock(&vm->lock);
	s->serving = true;
	for (;;) {
		while (!vm->stopping && !s->req_pending)
			pthread_cond_wait(&vm->cond, &vm->lock);
		if (vm->stopping)
			break;
		pthread_mutex_unlock(&vm->lock);
		memset(&s->req_res, 0, sizeof(s->req_res));
		s->req_err[0] = '\0';
		s->req_ret    = take(vm, s->req_path, s->req_stop, &s->req_res,
				     s->req_err, sizeof(s->req_err));
		pthread_mutex_lock(&vm->lock);
		s->req_pending = false;
		s->req_done    = true;
		pthread_cond_broadcast(&vm->cond);
	}
	s->serving = false;
	if (s->req_pending) {
		s->req_pending = false;
		s->req_done    = true;
		s->req_ret     = -ESHUTDOWN;
		snprintf(s->req_err, sizeof(s->req_err), "the VM stopped");
		pthread_cond_broadcast(&vm->cond);
	}
	pthread_mutex_unlock(&vm->lock);
}

int vmm_snapshot_request(struct vmm_vm *vm, const char *path, bool stop,
			 struct vmm_snapshot_result *res, char *err,
			 size_t errlen)
{
	struct vmm_snapshot *s = vm->snap;
	int ret                = 0;

	if (!s) {
		snprintf(err, errlen, "snapshots are not available in this VM");
		return -ENOTSUP;
	}
	if (vm->snapshot_refusal) {
		snprintf(err, errlen, "snapshots of this VM are refused: %s",
			 vm->snapshot_refusal);
		return -ENOTSUP;
	}
	if (!path || path[0] != '/' ||
	    strlen(path) >= sizeof(s->req_path) - 32) {
		snprintf(err, errlen, "the file must be an absolute path");
		return -EINVAL;
	}
	pthread_mutex_lock(&vm->lock);
	if (!s->serving || vm->stopping) {
		snprintf(err, errlen, "the VM is not running");
		ret = -ESHUTDOWN;
	} else if (s->req_pending) {
		snprintf(err, errlen, "a snapshot is already being taken");
		ret = -EBUSY;
	}
	if (ret)
		goto out_unlock;
	snprintf(s->req_path, sizeof(s->req_path), "%s", path);
	s->req_stop    = stop;
	s->req_done    = false;
	s->req_pending = true;
	pthread_cond_broadcast(&vm->cond);
	while (!s->req_done)
		pthread_cond_wait(&vm->cond, &vm->lock);
	ret  = s->req_ret;
	*res = s->req_res;
	snprintf(err, errlen, "%s", s->req_err);
out_unlock:
	pthread_mutex_unlock(&vm->lock);
	return ret;
}
