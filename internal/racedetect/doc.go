// Package racedetect says whether the binary was built with the race
// detector, for the tests that must leave out what races inside a
// dependency (quic-go/quic-go#4303: quic-go's client opening streams in
// 0-RTT races with its own handshake) and run it without the detector
// instead.
package racedetect
