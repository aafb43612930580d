package kquic

import "kquic.dev/internal/quicabi"

// convertEvent turns a decoded kernel event into the package's type.
func convertEvent(e quicabi.Event) Event {
	switch e := e.(type) {
	case quicabi.StreamUpdate:
		return &StreamUpdateEvent{StreamID: e.ID, State: e.State, ErrorCode: StreamErrorCode(e.ErrCode), FinalSize: e.FinalSize}
	case quicabi.StreamMaxData:
		return &StreamMaxDataEvent{StreamID: e.ID, MaxData: e.MaxData}
	case quicabi.MaxStreams:
		return &MaxStreamsEvent{MaxStreamID: e.MaxStreamID}
	case quicabi.ConnectionID:
		return &ConnectionIDEvent{Dest: e.Dest, Active: e.Active, PriorTo: e.PriorTo}
	case quicabi.ConnectionClose:
		ev := &ConnectionCloseEvent{Application: e.Frame == 0, FrameType: e.Frame, Reason: e.Phrase}
		if ev.Application {
			ev.ErrorCode = ApplicationErrorCode(e.ErrCode)
		} else {
			ev.TransportErrorCode = TransportErrorCode(e.ErrCode)
		}
		return ev
	case quicabi.Migration:
		return &MigrationEvent{Local: e.Local}
	case quicabi.KeyUpdate:
		return &KeyUpdateEvent{Phase: e.Phase}
	case quicabi.NewToken:
		return &NewTokenEvent{Token: e.Token}
	case quicabi.NewSessionTicket:
		return &NewSessionTicketEvent{Ticket: e.Message}
	}
	return nil
}
