/* SPDX-License-Identifier: MIT */
/*
 * ctl_proto.h: the wire protocol of a VM's control socket, shared by
 * the VMM (ctl_server.c) and the host commands (ctl_client.c). Pure: no VM
 * state, so unit tests drive it with arbitrary bytes.
 *
 * Framing
 *   Every message is a 4-byte big-endian length N (1 .. VMM_CTL_MSG_MAX)
 *   followed by N bytes of UTF-8 JSON text holding one object. A length of
 *   0 or above the maximum is a framing error: the server answers it and
 *   closes the connection (it cannot find the next frame).
 *
 *   The one exception: a smpl_drain request with "packed":1
 *   whose reply is ok carries "packed_bytes":N in that reply, and exactly
 *   one more frame follows it immediately (before the reply to any later
 *   request) from the server: the same 4-byte big-endian
 *   length, equal to N (VMM_CTL_PK_HDR .. VMM_CTL_PK_MAX), and N bytes of
 *   binary packed samples (below), not JSON. No other reply is followed by
 *   a binary frame, an error reply never is, and clients never send one: a
 *   client reads it only with vmm_ctl_recv_packed() and the N its reply
 *   announced (a length other than N is a protocol error), and
 *   vmm_ctl_recv() refuses it (not JSON).
 *
 * Packed samples (layout version VMM_CTL_PK_VERSION = 1, all little-endian)
 *   header  u16 version, u16 rec_size, u32 count        (VMM_CTL_PK_HDR: 8)
 *   count records, each rec_size bytes of fixed fields then its arrays:
 *     0  u16 cpu        2  u16 set       4  u16 ovfl_pmd   6  u16 nr_missed
 *     8  i32 pid       12  i32 tid      16  u64 tstamp    24  u64 ip
 *    32  u64 period    40  u16 nr_vals  42  u16 nr_chain  44  u32 0 (reserved)
 *    rec_size  nr_vals x u64 values, then nr_chain x u64 callers (innermost
 *              first)
 *   Version 1 writes rec_size VMM_CTL_PK_REC (48). A later layout adds
 *   fields before rec_size and raises it: readers skip what they do not
 *   know, and refuse a rec_size below 48, another version, a count above
 *   VMM_CTL_DRAIN_MAX or beyond the frame, nr_vals above
 *   VMM_CTL_SAMPLE_VALS, nr_chain above VMM_CTL_CHAIN_MAX, a record cut
 *   short and bytes after the last record.
 *
 * Requests and replies (version VMM_CTL_PROTO = 1)
 *   request  {"v":1, "id":N, "cmd":"NAME", ...arguments}
 *   reply    {"v":1, "id":N, "ok":true, ...results}
 *            {"v":1, "id":N|null, "ok":false, "error":"text", "errno":E}
 *   id is an integer 0 .. 2^53 chosen by the client and echoed. Every
 *   request is checked against the command's field table below before it
 *   runs: unknown commands, unknown or missing fields, wrong types and
 *   values out of range get an error reply naming the field; the
 *   connection and the VM keep going.
 *
 * Commands (host contexts are the operator's: PFM_FL_SYSTEM_WIDE contexts
 * owned by VPMU_OWNER_HOST, invisible to the guest; a connection sees only
 * the contexts it created, and they are destroyed when it closes)
 *   hello, info          VM identity; info adds uptime and active contexts
 *   resolve   name       event name -> code (catalogue and KVM statistics)
 *   ctx_create vcpu [smpl_buf_size] [callchain]   one vCPU-wide context
 *                        (a default-format buffer when smpl_buf_size > 0;
 *                        callchain N > 0: each sample carries up to N
 *                        guest return addresses) -> ctx
 *   write_pmcs ctx pmcs[{num,set,value,flags,reset_pmds,smpl_pmds,eventid}]
 *   write_pmds ctx pmds[{num,set,value,long_reset,short_reset}]
 *   create_evtsets ctx sets[{id,flags,next,timeout_ns}] -> timeout_ns[]
 *   load ctx vcpu [set], unload ctx, start ctx [set], stop ctx
 *   read_pmds ctx pmds[{num,set}] -> values[]
 *   getinfo_evtsets ctx sets[ids] -> sets[{id,runs,act_ns}]
 *   smpl_drain ctx [max] [packed] -> samples[[cpu,set,ovfl_pmd,tstamp,ip,
 *                        pid,tid,[values](, [callers])]],
 *                        weights[[nr_missed,period]], lost, more: samples
 *                        recorded since the last drain (callers, innermost
 *                        first, with callchain); a full buffer is restarted
 *                        by the VMM. With packed 1: no samples and weights
 *                        but packed_bytes N, and the samples in the binary
 *                        frame that follows (Framing above); fewer than max
 *                        when they would not fit in VMM_CTL_PK_MAX (more
 *                        says so)
 *   destroy ctx
 * Sessions: one request per VM for what the commands above do per vCPU
 *   session_open [vcpus[]] pmcs[...] [pmds[...]] [sets[...]] [set]
 *                        [smpl_buf_size] [callchain] -> session, vcpus[],
 *                        ctx[]: one
 *                        context per vCPU (every vCPU when vcpus is
 *                        absent), each with these sets, PMCs and PMDs,
 *                        loaded and started on its vCPU
 *   session_read session -> vcpus[{vcpu, values[], sets[{id,runs,act_ns}],
 *                        stale[, age_ns]}]: the PMDs of the session's PMCs,
 *                        in pmcs order; stale when the vCPU could not
 *                        account its run time in time (age_ns: how old)
 *   session_close session
 * perfmon2 errors come back as "errno" (positive) with the strerror text.
 */
#ifndef VMM_CTL_PROTO_H
#define VMM_CTL_PROTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMM_CTL_PROTO   1
#define VMM_CTL_MSG_MAX (4U << 20) /* bytes of one message's JSON */
#define VMM_CTL_HDR     4          /* the length prefix */
#define VMM_CTL_ID_MAX  (1LL << 53)

/*
 * Limits of one request. The schema rows (ctl_schema.c) and the arrays the
 * server copies a request into (vmm/ctl) both take them from here, so a
 * request the schema accepts always fits.
 */
#define VMM_CTL_REGS_MAX           64 /* PMC or PMD elements in one request */
#define VMM_CTL_REG_NUM_MAX        63 /* highest PMC/PMD index */
#define VMM_CTL_SETS_MAX           64 /* event sets in one request */
#define VMM_CTL_SET_ID_MAX         65535 /* highest event set id */
#define VMM_CTL_VCPU_ID_MAX        4095 /* highest vCPU index a request names */
#define VMM_CTL_SESSION_VCPUS      64   /* vCPUs of one session */
#define VMM_CTL_SESSIONS_MAX       4    /* sessions of one connection */
#define VMM_CTL_CTX_HANDLE_MAX     (1 << 30)
#define VMM_CTL_NAME_MAX           128  /* bytes of an event name */
#define VMM_CTL_PATH_MAX           4000 /* bytes of a snapshot path */
#define VMM_CTL_SMPL_BUF_MAX       (64LL << 20)
#define VMM_CTL_DRAIN_MAX          65536 /* samples in one smpl_drain reply */
#define VMM_CTL_SAMPLE_VALS        16  /* PMD values a drained sample carries */
#define VMM_CTL_CHAIN_MAX          32  /* callers a drained sample carries */
#define VMM_CTL_TASKS_MAX          256 /* guest task records in one reply */
#define VMM_CTL_SET_TIMEOUT_MAX_NS (3600LL * 1000000000LL)

/* Field types of the request tables. */
enum vmm_ctl_type {
	VMM_CTL_INT = 1, /* integer in [min, max] */
	VMM_CTL_U64,     /* non-negative integer up to 2^64-1 */
	VMM_CTL_STR,     /* string of min .. max bytes */
	VMM_CTL_INTS,    /* array of min..max integers in [0, 65535] */
	VMM_CTL_OBJS,    /* array of min..max objects checked with (elem) */
};

struct vmm_ctl_field {
	const char *name; /* NULL ends a table */
	uint8_t type;     /* enum vmm_ctl_type */
	bool required;
	int64_t min, max;                 /* value, length or elements */
	const struct vmm_ctl_field *elem; /* VMM_CTL_OBJS element table */
};

/*
 * Every command, by id. The schema table below and the server's handler
 * table (vmm/ctl) are both indexed by it, so one id names one schema and
 * one handler.
 */
enum vmm_ctl_cmd_id {
	VMM_CTL_CMD_HELLO,
	VMM_CTL_CMD_INFO,
	VMM_CTL_CMD_RESOLVE,
	VMM_CTL_CMD_CTX_CREATE,
	VMM_CTL_CMD_DESTROY,
	VMM_CTL_CMD_WRITE_PMCS,
	VMM_CTL_CMD_WRITE_PMDS,
	VMM_CTL_CMD_CREATE_EVTSETS,
	VMM_CTL_CMD_LOAD,
	VMM_CTL_CMD_UNLOAD,
	VMM_CTL_CMD_START,
	VMM_CTL_CMD_STOP,
	VMM_CTL_CMD_READ_PMDS,
	VMM_CTL_CMD_GETINFO_EVTSETS,
	VMM_CTL_CMD_SMPL_DRAIN,
	VMM_CTL_CMD_SESSION_OPEN,
	VMM_CTL_CMD_SESSION_READ,
	VMM_CTL_CMD_SESSION_CLOSE,
	VMM_CTL_CMD_SNAPSHOT,
	VMM_CTL_CMD_GUEST_TASKS,
	VMM_CTL_NR_CMDS
};

struct vmm_ctl_cmd {
	const char *name;
	enum vmm_ctl_cmd_id id;             /* its index in vmm_ctl_cmds */
	const struct vmm_ctl_field *fields; /* besides v, id and cmd */
};

/* The schema of every command, indexed by its id (ctl_schema.c). */
extern const struct vmm_ctl_cmd vmm_ctl_cmds[VMM_CTL_NR_CMDS];

/* The command called (name), or NULL if there is none. */
/*
 * The name of a guest process record's op (abi.h PVPMU_TASK_*: "comm",
 * "mmap", "exit"), NULL if unknown; and the op of a name, 0 if unknown.
 * One table for the guest_tasks reply and the record file's notes.
 */
const char *vmm_ctl_task_op_name(uint32_t op);
uint32_t vmm_ctl_task_op(const char *name);

const struct vmm_ctl_cmd *vmm_ctl_cmd_find(const char *name);

/*
 * Parse and check one request frame body (text, len): valid JSON object,
 * v == VMM_CTL_PROTO, id, a known cmd and its fields. Returns 0 with
 * (*req) (the caller puts it) and (*cmd); else -EINVAL (-EPROTO for a bad
 * version) with a message in (err). (*id) is the request id when one was
 * readable, else -1, so the error reply can carry it.
 */
int vmm_ctl_parse_request(const char *text, size_t len,
			  struct json_object **req,
			  const struct vmm_ctl_cmd **cmd, int64_t *id,
			  char *err, size_t errlen);

/*
 * Check (obj) against (fields): every key known, required keys present,
 * types and ranges. Returns 0, or -EINVAL with a message naming (where)
 * and the field.
 */
int vmm_ctl_check_fields(struct json_object *obj,
			 const struct vmm_ctl_field *fields, const char *where,
			 char *err, size_t errlen);

/* Field accessors for checked objects (absent: the default). */
int64_t vmm_ctl_get_int(struct json_object *obj, const char *key, int64_t def);
uint64_t vmm_ctl_get_u64(struct json_object *obj, const char *key,
			 uint64_t def);

/*
 * UTF-8 (ctl_utf8.c). Requests must be UTF-8 and every reply is: strict
 * RFC 3629, no overlong forms, surrogates or code points above U+10FFFF.
 *
 * vmm_ctl_utf8_check: the offset of the first byte of (s, len) that is not
 * part of a valid character, or (len) when all of it is valid.
 * vmm_ctl_utf8_prefix: the bytes of the longest prefix of the string (s),
 * at most (max), that ends between characters: request text echoed in a
 * message is printed with "%.*s" of this, never cutting a character.
 * vmm_ctl_utf8_clean: a malloc'd copy of (s, len), NUL-terminated, with
 * every invalid byte replaced by U+FFFD and a character cut short at the
 * end dropped; its length in (*out_len). NULL if out of memory.
 */
size_t vmm_ctl_utf8_check(const char *s, size_t len);
int vmm_ctl_utf8_prefix(const char *s, size_t max);
char *vmm_ctl_utf8_clean(const char *s, size_t len, size_t *out_len);

/*
 * New reply objects: {"v":1,"id":id,"ok":true} / ok false + error; the
 * error text (msg) is made valid UTF-8 (vmm_ctl_utf8_clean).
 */
struct json_object *vmm_ctl_reply_ok(int64_t id);
struct json_object *vmm_ctl_reply_err(int64_t id, int err, const char *msg);

/*
 * Incremental frame reader for non-blocking sockets: append bytes with
 * vmm_ctl_rx_fill(), take complete frames with vmm_ctl_rx_next().
 */
struct vmm_ctl_rx {
	unsigned char *buf;
	size_t len, cap;
};

/* Read what (fd) has (non-blocking): 0, -EAGAIN, -ECONNRESET on EOF. */
int vmm_ctl_rx_fill(struct vmm_ctl_rx *rx, int fd);

/*
 * Look at the next complete frame: returns 1 with (*body, *len) valid until
 * vmm_ctl_rx_drop(rx, len), which the caller calls when done with it; 0 if
 * none is complete; -EMSGSIZE for a bad length (framing is lost).
 */
int vmm_ctl_rx_next(struct vmm_ctl_rx *rx, const char **body, size_t *len);
void vmm_ctl_rx_drop(struct vmm_ctl_rx *rx, size_t len);

void vmm_ctl_rx_free(struct vmm_ctl_rx *rx);

/*
 * Write (msg) as one frame to (fd), waiting at most (timeout_ms) for room.
 * Text that is not valid UTF-8 (a string json-c took as given) is sent
 * cleaned with vmm_ctl_utf8_clean(). Returns 0, -EMSGSIZE, -ETIMEDOUT or
 * -errno.
 */
int vmm_ctl_send(int fd, struct json_object *msg, int timeout_ms);

/*
 * Read one frame from (fd) and parse it as a JSON object into (*out),
 * waiting at most (timeout_ms). Returns 0, -ETIMEDOUT, -ECONNRESET (EOF),
 * -EMSGSIZE or -EPROTO (not a JSON object).
 */
int vmm_ctl_recv(int fd, struct json_object **out, int timeout_ms);

/*
 * Read the binary frame a smpl_drain reply announced with "packed_bytes"
 * (want) into (buf) (at least want bytes), waiting at most (timeout_ms).
 * Returns 0; -EMSGSIZE when (want) is outside VMM_CTL_PK_HDR ..
 * VMM_CTL_PK_MAX; -EPROTO when the frame's length is not (want) (the
 * stream is then lost); -ETIMEDOUT, -ECONNRESET or -errno.
 */
int vmm_ctl_recv_packed(int fd, void *buf, size_t want, int timeout_ms);

/* ---- packed samples (ctl_packed.c; layout under Framing above) ------ */

#define VMM_CTL_PK_VERSION 1
#define VMM_CTL_PK_HDR     8               /* frame header bytes */
#define VMM_CTL_PK_REC     48              /* fixed bytes of a v1 record */
#define VMM_CTL_PK_MAX     VMM_CTL_MSG_MAX /* bytes of one frame */

/*
 * One sample. Encoding reads nr_vals values from (vals) and nr_chain
 * callers from (chain); decoding points them at the caller's arrays.
 */
struct vmm_ctl_pk_rec {
	uint16_t cpu, set, ovfl_pmd, nr_missed;
	int32_t pid, tid;
	uint64_t tstamp, ip, period;
	uint16_t nr_vals, nr_chain;
	const uint64_t *vals, *chain;
};

/* Bytes of a record with (nr_vals) values and (nr_chain) callers. */
size_t vmm_ctl_pk_rec_size(unsigned int nr_vals, unsigned int nr_chain);

/* Write the frame header for (count) records at (p) (VMM_CTL_PK_HDR). */
void vmm_ctl_pk_put_hdr(unsigned char *p, uint32_t count);

/* Write record (r) at (p); returns its size (vmm_ctl_pk_rec_size). */
size_t vmm_ctl_pk_put(unsigned char *p, const struct vmm_ctl_pk_rec *r);

/* A frame being decoded; (left) records remain. */
struct vmm_ctl_pk_reader {
	const unsigned char *p;
	size_t len, off;
	uint32_t left;
	uint16_t rec_size;
};

/*
 * Start reading frame (buf, len): checks its header (version, record
 * size, count against the frame). 0, or -EPROTO with a message in (err).
 */
int vmm_ctl_pk_open(struct vmm_ctl_pk_reader *rd, const void *buf, size_t len,
		    char *err, size_t errlen);

/*
 * The next record into (r), its values into (vals) (VMM_CTL_SAMPLE_VALS
 * entries) and callers into (chain) (VMM_CTL_CHAIN_MAX): 1; 0 after the
 * last one (the frame ends there); -EPROTO with a message in (err) for a
 * malformed record, after which the frame must be dropped.
 */
int vmm_ctl_pk_next(struct vmm_ctl_pk_reader *rd, struct vmm_ctl_pk_rec *r,
		    uint64_t *vals, uint64_t *chain, char *err, size_t errlen);

#endif /* VMM_CTL_PROTO_H */
