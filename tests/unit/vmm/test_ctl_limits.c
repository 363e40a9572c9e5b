// SPDX-License-Identifier: MIT
/*
 * test_ctl_limits.c: a guest holding every context of its VM does not lock
 * host operators out, through the VMM's own wiring: the domain
 * vmm_pv_create() builds from the default config (no KVM: the vCPU has no
 * fd), a guest that creates contexts until refused, then the control
 * server's ctx_create request for an operator, which must succeed with a
 * sampling buffer as `vpmu record` asks for.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "ctl_priv.h"
#include "vm_config.h"

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;
static struct vmm_control ctl;
static struct vmm_ctl_client client;

static void setup(void)
{
	struct vmm_config cfg;
	unsigned int i;

	vmm_config_defaults(&cfg);
	vm.nr_vcpus = 1;
	vm.vcpus    = &vcpu;
	vmm_vm_add_module(&vm, &vmm_ctl_module);
	vmm_vm_set_module_priv(&vm, &vmm_ctl_module, &ctl);
	vcpu.vm   = &vm;
	vcpu.fd   = -1;
	ctl.vm    = &vm;
	client.fd = -1;
	for (i = 0; i < VMM_CTL_CTX_MAX; i++)
		client.ctx[i].handle = -1;
	cr_assert(eq(int, vmm_pv_create(&vm, &cfg), 0));
}

static void teardown(void)
{
	vmm_ctl_client_release(&ctl, &client);
	vmm_pv_destroy(&vm);
	vmm_pv_detach(&vm);
}

TestSuite(vmm_ctl_limits, .init = setup, .fini = teardown);

/* Run one request through the server's dispatcher; returns the reply. */
static struct json_object *request(const char *text)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep;
	char err[256] = "";
	int64_t id;

	cr_assert(eq(int,
		     vmm_ctl_parse_request(text, strlen(text), &req, &cmd, &id,
					   err, sizeof(err)),
		     0),
		  "%s", err);
	rep = vmm_ctl_handle(&ctl, &client, cmd, req, id);
	json_object_put(req);
	return rep;
}

static bool reply_ok(struct json_object *rep)
{
	struct json_object *ok;

	return json_object_object_get_ex(rep, "ok", &ok) &&
	       json_object_get_boolean(ok);
}

Test(vmm_ctl_limits, operator_gets_contexts_when_the_guest_holds_all)
{
	struct vpmu_caller guest = {.owner = VPMU_OWNER_GUEST,
				    .cpu   = vmm_pv_vcpu(&vcpu)->cpu};
	struct pfarg_ctx pc;
	struct json_object *rep;
	unsigned int n = 0;
	int ret;

	for (;;) {
		memset(&pc, 0, sizeof(pc));
		ret = vpmu_ctx_create(vmm_pv(&vm)->domain, &guest, &pc, 1, NULL,
				      0);
		if (ret)
			break;
		cr_assert(lt(u32, ++n, 100000));
	}
	cr_assert(eq(int, ret, -ENOMEM));
	cr_expect(eq(u32, n, VMM_LIMIT_CONTEXTS), "the guest's limit");
	rep = request("{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,"
		      "\"smpl_buf_size\":262144}");
	cr_expect(reply_ok(rep), "operator refused: %s",
		  json_object_to_json_string(rep));
	json_object_put(rep);
}

Test(vmm_ctl_limits, operator_limit_is_its_own)
{
	struct vpmu_caller guest = {.owner = VPMU_OWNER_GUEST,
				    .cpu   = vmm_pv_vcpu(&vcpu)->cpu};
	struct pfarg_ctx pc      = {0};
	struct json_object *rep;
	unsigned int i;

	/* One connection fills its table; the guest still creates. */
	for (i = 0; i < VMM_CTL_CTX_MAX; i++) {
		rep = request("{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\","
			      "\"vcpu\":0}");
		cr_assert(reply_ok(rep), "context %u: %s", i,
			  json_object_to_json_string(rep));
		json_object_put(rep);
	}
	cr_expect(eq(
		int,
		vpmu_ctx_create(vmm_pv(&vm)->domain, &guest, &pc, 1, NULL, 0),
		0));
}
