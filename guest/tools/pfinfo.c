// SPDX-License-Identifier: MIT
/*
 * pfinfo: what the virtual PMU offers: what the platform detected (bare:
 * vpmu's CPUID leaves), the configuration (PFM_GET_CONFIG, spec 3.1.17),
 * every implemented PMC and PMD (PFM_GETINFO_PMCS/PMDS, spec 3.1.13-14:
 * type, default value, reserved bits, hardware index), the sampling
 * formats (spec 3.5.2), and the event catalogue with each event's
 * availability on this host, found by writing it into a PMC of a scratch
 * context: an event the host cannot count is refused there with
 * PFM_REG_RETFL_NOTAVAIL.
 *
 *   pfinfo [-h]
 */
#include "tool.h"

#define PFINFO_MAX_FORMATS 32

static const char usage[] =
	"Usage: pfinfo [-h]\n"
	"\n"
	"Print the vpmu virtual PMU's perfmon2 configuration, its PMCs and\n"
	"PMDs, its sampling formats, and the event catalogue with each\n"
	"event's availability on this host (Linux: through /dev/pvpmu,\n"
	"module pvpmu.ko).\n"
	"\n"
	"Exit status: 0, or 1 when the PMU cannot be reached or counts no\n"
	"catalogue event.\n";

static const char *const type_names[] = {
	[PFM_REG_TYPE_PMC] = "pmc",      [PFM_REG_TYPE_PMD] = "pmd",
	[PFM_REG_TYPE_MSR] = "msr",      [PFM_REG_TYPE_SPR] = "spr",
	[PFM_REG_TYPE_IBR] = "ibr",      [PFM_REG_TYPE_DBR] = "dbr",
	[PFM_REG_TYPE_VIRT] = "virtual",
};

static const char *type_name(unsigned int t)
{
	if (t < TOOL_ARRAY_SIZE(type_names) && type_names[t])
		return type_names[t];
	return "?";
}

static const char *const src_names[] = {"?", "hv", "perf-hw", "perf-sw",
					"kvmstat"};

static int show_config(pfarg_config_t *cfg)
{
	char a[32], b[32];
	int ret = pfm_get_config(cfg);

	if (ret)
		return tool_err("pfinfo",
				"PFM_GET_CONFIG (is pvpmu.ko loaded?)", ret);
	tool_printf("pfinfo: perfmon2 interface %u.%u, counter width %u bits, "
		    "PMCs 0x%llx, PMDs 0x%llx\n",
		    PFM_VERSION_MAJOR(cfg->cf_version),
		    PFM_VERSION_MINOR(cfg->cf_version), cfg->cf_counter_width,
		    (unsigned long long)cfg->cf_impl_pmcs[0],
		    (unsigned long long)cfg->cf_impl_pmds[0]);
	tool_printf("pfinfo: limits: %s bytes per vector argument, %s bytes "
		    "of sampling buffers\n",
		    tool_u64(a, sizeof(a), cfg->cf_arg_size_max),
		    tool_u64(b, sizeof(b), cfg->cf_smpl_buf_size_max));
	return 0;
}

/* GETINFO of every register in (impl); pmcinfo and pmdinfo share a layout. */
static int show_regs(const char *kind, uint64_t impl, int is_pmc)
{
	pfarg_pmcinfo_t r;
	unsigned int i;
	int ret;

	tool_printf("pfinfo: %-3s type     default            reserved mask   "
		    "   index\n",
		    kind);
	for (i = 0; i < PFM_MAX_PMCS; i++) {
		if (!(impl & (1ULL << i)))
			continue;
		r   = (pfarg_pmcinfo_t){.reg_num = (pvpmu_u16)i};
		ret = is_pmc ? pfm_getinfo_pmcs(&r, 1)
			     : pfm_getinfo_pmds((pfarg_pmdinfo_t *)&r, 1);
		if (ret)
			return tool_err("pfinfo", "PFM_GETINFO", ret);
		if (r.reg_index == PFM_REG_IDX_NONE)
			tool_printf("pfinfo: %s%-2u %-8s 0x%016llx 0x%016llx "
				    "-\n",
				    kind, i, type_name(r.reg_type),
				    (unsigned long long)r.reg_def_value,
				    (unsigned long long)r.reg_rsvd_mask);
		else
			tool_printf("pfinfo: %s%-2u %-8s 0x%016llx 0x%016llx "
				    "0x%llx\n",
				    kind, i, type_name(r.reg_type),
				    (unsigned long long)r.reg_def_value,
				    (unsigned long long)r.reg_rsvd_mask,
				    (unsigned long long)r.reg_index);
	}
	return 0;
}

/* Try every catalogue event in PMC0 of a scratch (never loaded) context. */
static int show_events(void)
{
	pfarg_ctx_t ctx = {0};
	unsigned int i, nr_ok = 0, nr = pvpmu_catalog_size();
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pfinfo", "PFM_CREATE_CONTEXT", ret);
	tool_printf("pfinfo: event             code    source   available  "
		    "description\n");
	for (i = 0; i < nr; i++) {
		const struct pvpmu_event_desc *e = pvpmu_catalog_at(i);
		pfarg_pmc_t pmc                  = {0};
		const char *avail;
		char spec[64];

		/* Family events: probe their first member. */
		tool_snprintf(spec, sizeof(spec), "%s%s", e->name,
			      tool_is_family(e) ? ":umask=2" : "");
		ret = pvpmu_event_encode(spec, &pmc.reg_value, 0);
		if (!ret)
			ret = pfm_write_pmcs(ctx.ctx_fd, &pmc, 1);
		if (!ret) {
			avail = "yes";
			nr_ok++;
		} else if (pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL) {
			avail = "no";
		} else {
			avail = pvpmu_strerror(ret);
		}
		tool_printf("pfinfo: %-17s 0x%04x  %-8s %-10s %s\n", e->name,
			    e->code, src_names[e->source < 5 ? e->source : 0],
			    avail, e->desc);
	}
	tool_printf("pfinfo: %u of %u catalogue events available on this "
		    "host\n",
		    nr_ok, nr);
	ret = pfm_close(ctx.ctx_fd);
	if (ret)
		return tool_err("pfinfo", "close", ret);
	return nr_ok ? 0 : -PVPMU_ENOENT;
}

/*
 * The sampling formats the VMM offers, built-in and loaded at run time
 * (spec 3.5.2: UUID and logical name, listable without privilege).
 */
static int show_formats(void)
{
	pfm_format_info_t fmts[PFINFO_MAX_FORMATS];
	int i, k, n;

	n = pfm_getinfo_formats(fmts, PFINFO_MAX_FORMATS);
	if (n < 0)
		return tool_err("pfinfo", "pfm_getinfo_formats", n);
	tool_printf("pfinfo: %d sampling formats\n", n);
	for (i = 0; i < n && i < PFINFO_MAX_FORMATS; i++) {
		char id[40];
		int o = 0;

		for (k = 0; k < 16; k++) {
			o += tool_snprintf(id + o, sizeof(id) - (size_t)o,
					   "%02x", fmts[i].uuid[k]);
			if (k == 3 || k == 5 || k == 7 || k == 9)
				id[o++] = '-';
		}
		id[o] = '\0';
		tool_printf("pfinfo: format %-16s %s %s, %llu argument bytes\n",
			    (const char *)fmts[i].name, id,
			    (fmts[i].flags & PVPMU_FMT_BUILTIN) ? "built-in"
								: "run-time",
			    (unsigned long long)fmts[i].arg_size);
	}
	return 0;
}

int pfinfo_main(int argc, char **argv)
{
	pfarg_config_t cfg = {0};
	int ret;

	if (argc > 1)
		return tool_usage(usage, tool_streq(argv[1], "-h"));
	ret = tool_show_platform("pfinfo");
	if (!ret)
		ret = show_config(&cfg);
	if (!ret)
		ret = show_regs("PMC", cfg.cf_impl_pmcs[0], 1);
	if (!ret)
		ret = show_regs("PMD", cfg.cf_impl_pmds[0], 0);
	if (!ret)
		ret = show_formats();
	if (!ret)
		ret = show_events();
	return ret ? 1 : 0;
}
