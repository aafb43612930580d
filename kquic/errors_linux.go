package kquic

import "kquic.dev/internal/quicabi"

// closeError makes the error of a connection from the kernel's close record:
// all zero means the idle timer (or a stateless reset without a code) ended
// it.
func closeError(cc quicabi.ConnectionClose, remote bool) error {
	if cc.ErrCode == 0 && cc.Frame == 0 && cc.Phrase == "" && !remote {
		return &IdleTimeoutError{}
	}
	e := &CloseError{Remote: remote, Application: cc.Frame == 0, FrameType: cc.Frame, Reason: cc.Phrase}
	if e.Application {
		e.ErrorCode = ApplicationErrorCode(cc.ErrCode)
	} else {
		e.TransportErrorCode = TransportErrorCode(cc.ErrCode)
	}
	return e
}
