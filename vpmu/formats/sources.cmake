# Sampling formats (owner: sampling formats). Paths relative to vpmu/.
set(VPMU_FORMAT_SOURCES
	formats/registry.c
	formats/entry.c
	formats/default.c
	formats/nway.c
	formats/loader.c
)
