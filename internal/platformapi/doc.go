// Package platformapi holds a test that keeps the packages that build on
// every platform (kquic, handshake, ktls: real on Linux, stubs returning
// ErrNotSupported elsewhere) the same API on darwin, windows and freebsd as
// on Linux. It has no code of its own.
package platformapi
