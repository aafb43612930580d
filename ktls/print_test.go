package ktls

import (
	"crypto/tls"
	"errors"
	"testing"
)

// TestPrintsTheSameEverywhere pins what the errors print: this file builds on
// every platform and the errors are declared once (errors.go), so that
// `GOOS=darwin go test` checks the same table as Linux does.
func TestPrintsTheSameEverywhere(t *testing.T) {
	// An errno prints differently per platform (on Windows ENOENT is
	// ERROR_FILE_NOT_FOUND): a plain error stands for it.
	errno := errors.New("no such file or directory")
	kerr := &KernelError{Op: "setsockopt(SOL_TLS, TLS_TX)", Suite: tls.TLS_AES_128_GCM_SHA256, Version: tls.VersionTLS13,
		Err: errno, Kind: ErrUnsupportedCipher, Hint: "load tls.ko"}
	cases := []struct {
		err  error
		want string
	}{
		{&AlertError{Level: 2, Description: 20}, `ktls: peer sent fatal alert 20 (tls: bad record MAC)`},
		{&AlertError{Level: 1, Description: 90}, `ktls: peer sent warning alert 90 (tls: user canceled)`},
		{kerr, `ktls: setsockopt(SOL_TLS, TLS_TX) (TLS 1.3, TLS_AES_128_GCM_SHA256): no such file or directory: cipher suite not supported by kernel TLS; load tls.ko`},
		{ErrNotSupported, `ktls: kernel TLS is not supported here: unsupported operation`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%#v prints\n\t%s\nwant\n\t%s", c.err, got, c.want)
		}
	}
	if !errors.Is(kerr, ErrUnsupportedCipher) || !errors.Is(kerr, errno) {
		t.Errorf("%v does not unwrap to its sentinel and errno", kerr)
	}
}
