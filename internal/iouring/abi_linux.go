//go:build linux

package iouring

// The ABI of include/uapi/linux/io_uring.h that this package uses. Sizes
// and offsets are pinned by abi_test.go (checked against the header with
// offsetof: params 120 bytes, sq_off at 40, cq_off at 80; sqe 64; cqe 16).

// params is struct io_uring_params.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// sqe is struct io_uring_sqe, with the union members this package sets.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16 // for SEND_ZC: IORING_RECVSEND_* and IORING_SEND_ZC_* flags
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	msgFlags    uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFDIn  int32
	addr3       uint64
	pad2        uint64
}

// cqe is struct io_uring_cqe (without IORING_SETUP_CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

const (
	opSendZC = 47 // IORING_OP_SEND_ZC

	sendZCReportUsage = 1 << 3  // IORING_SEND_ZC_REPORT_USAGE (sqe.ioprio)
	notifUsageCopied  = 1 << 31 // IORING_NOTIF_USAGE_ZC_COPIED (a notification's res)

	cqeFMore  = 1 << 1 // IORING_CQE_F_MORE: a notification follows
	cqeFNotif = 1 << 3 // IORING_CQE_F_NOTIF

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP

	offSQRing = 0          // IORING_OFF_SQ_RING
	offCQRing = 0x8000000  // IORING_OFF_CQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS
)
