// SPDX-License-Identifier: MIT
/*
 * pfinfo: what the vpmu virtual PMU offers a Linux guest (libpvpmu over
 * pvpmu.ko): the configuration (PFM_GET_CONFIG, spec 3.1.17), every
 * implemented PMC and PMD (PFM_GETINFO_PMCS/PMDS, spec 3.1.13-14) and the
 * event catalogue, each event marked by whether this host counts it
 * (written into PMC 0 of a scratch context: PFM_REG_RETFL_NOTAVAIL if not).
 *
 *   pfinfo [-h]
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pvpmu/pvpmu.h>

#include "tool.h"

static const char usage[] =
	"Usage: pfinfo [-h]\n"
	"\n"
	"Print the vpmu virtual PMU's perfmon2 configuration, its PMCs and\n"
	"PMDs, and the event catalogue with each event's availability on\n"
	"this host, through /dev/pvpmu (module pvpmu.ko).\n"
	"\n"
	"Exit status: 0, or 1 when the PMU cannot be reached.\n";

static const char *const type_names[] = {
	[PFM_REG_TYPE_PMC] = "pmc",      [PFM_REG_TYPE_PMD] = "pmd",
	[PFM_REG_TYPE_MSR] = "msr",      [PFM_REG_TYPE_SPR] = "spr",
	[PFM_REG_TYPE_IBR] = "ibr",      [PFM_REG_TYPE_DBR] = "dbr",
	[PFM_REG_TYPE_VIRT] = "virtual",
};

static const char *type_name(unsigned int t)
{
	if (t < sizeof(type_names) / sizeof(type_names[0]) && type_names[t])
		return type_names[t];
	return "?";
}

static void print_regs(const char *kind, const pvpmu_u64 *impl, int pmcs)
{
	pfarg_pmcinfo_t info;
	unsigned int i;
	int ret;

	for (i = 0; i < 64; i++) {
		if (!(impl[0] & (1ULL << i)))
			continue;
		memset(&info, 0, sizeof(info));
		info.reg_num = (pvpmu_u16)i;
		ret          = pmcs ? pfm_getinfo_pmcs(&info, 1)
				    : pfm_getinfo_pmds((pfarg_pmdinfo_t *)&info, 1);
		if (ret) {
			printf("  %s%u: %s\n", kind, i, pvpmu_strerror(ret));
			continue;
		}
		printf("  %s%-2u %-8s default 0x%016" PRIx64
		       " reserved 0x%016" PRIx64 "\n",
		       kind, i, type_name(info.reg_type),
		       (uint64_t)info.reg_def_value,
		       (uint64_t)info.reg_rsvd_mask);
	}
}

/* Can this host count (value)? A scratch context's PMC 0 says. */
static const char *availability(int fd, pvpmu_u64 value)
{
	pfarg_pmc_t pmc = {.reg_num = 0, .reg_value = value};
	int ret         = pfm_write_pmcs(fd, &pmc, 1);

	if (!ret)
		return "yes";
	if (pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL)
		return "no (not on this host)";
	return pvpmu_strerror(ret);
}

int main(int argc, char **argv)
{
	pfarg_config_t cfg = {0};
	pfarg_ctx_t ctx    = {0};
	pvpmu_u64 value;
	unsigned int i;
	int ret;

	if (argc > 1)
		return tool_usage(usage, !strcmp(argv[1], "-h"));
	ret = pfm_get_config(&cfg);
	if (ret) {
		fprintf(stderr,
			"pfinfo: PFM_GET_CONFIG: %s (is pvpmu.ko "
			"loaded?)\n",
			pvpmu_strerror(ret));
		return 1;
	}
	printf("pfinfo: perfmon2 %u.%u, PMCs 0x%" PRIx64 ", PMDs 0x%" PRIx64
	       ", counter width %u bits, max argument %" PRIu64 " bytes\n",
	       PFM_VERSION_MAJOR(cfg.cf_version),
	       PFM_VERSION_MINOR(cfg.cf_version), (uint64_t)cfg.cf_impl_pmcs[0],
	       (uint64_t)cfg.cf_impl_pmds[0], cfg.cf_counter_width,
	       (uint64_t)cfg.cf_arg_size_max);
	print_regs("pmc", cfg.cf_impl_pmcs, 1);
	print_regs("pmd", cfg.cf_impl_pmds, 0);
	ret = pfm_create_context(&ctx, 0, 0);
	printf("events:\n");
	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);

		if (pvpmu_event_encode(d->name, &value, 0))
			continue;
		printf("  %-24s %-40s %s\n", d->name, d->desc,
		       ret ? "?" : availability(ctx.ctx_fd, value));
	}
	if (!ret)
		pfm_close(ctx.ctx_fd);
	return 0;
}
