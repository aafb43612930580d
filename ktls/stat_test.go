package ktls

import (
	"strings"
	"testing"
)

const tlsStatFixture = `TlsCurrTxSw                     	2
TlsCurrRxSw                     	2
TlsCurrTxDevice                 	0
TlsCurrRxDevice                 	0
TlsTxSw                         	17
TlsRxSw                         	17
TlsTxDevice                     	0
TlsRxDevice                     	0
TlsDecryptError                 	1
TlsRxDeviceResync               	0
TlsDecryptRetry                 	0
TlsRxNoPadViolation             	0
TlsRxRekeyOk                    	3
TlsRxRekeyError                 	0
TlsTxRekeyOk                    	3
TlsTxRekeyError                 	0
TlsRxRekeyReceived              	3
`

func TestParseStats(t *testing.T) {
	s, err := ParseStats(strings.NewReader(tlsStatFixture))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 17 || s["TlsTxSw"] != 17 || s["TlsDecryptError"] != 1 || s["TlsRxRekeyReceived"] != 3 {
		t.Fatalf("parsed %v", s)
	}
	old := Stats{"TlsTxSw": 10}
	if d := s.Sub(old); d["TlsTxSw"] != 7 || d["TlsRxSw"] != 17 {
		t.Fatalf("Sub: %v", d)
	}
	for _, bad := range []string{"TlsTxSw\n", "TlsTxSw x\n", "TlsTxSw 1 2\n"} {
		if _, err := ParseStats(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseStats(%q) accepted", bad)
		}
	}
}
