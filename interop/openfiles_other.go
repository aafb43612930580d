//go:build !unix

package interop

// keepOpenFileLimit does nothing here (openfiles_unix.go).
func keepOpenFileLimit() {}
