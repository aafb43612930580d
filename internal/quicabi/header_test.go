//go:build linux

package quicabi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The module's UAPI header is not committed to this repository. The drift
// test reads it from $KQUIC_UAPI_HEADER, or finds it in the source tree of
// the module that $KQUIC_MODULE names (the tree quic.ko was built in:
// <tree>/modules/include/uapi/linux/quic.h or <tree>/include/uapi/linux/quic.h
// above the module file), so a run with a built module checks the ABI
// against that module's own header.

// abiConsts lists every number this package takes from quic.h, by its name
// there. A name the header has and this table lacks, or the reverse, fails
// TestHeaderMatches.
var abiConsts = map[string]int64{
	"IPPROTO_QUIC": IPPROTO_QUIC,
	"SOL_QUIC":     SOL_QUIC,

	"QUIC_STREAM_INFO":    QUIC_STREAM_INFO,
	"QUIC_HANDSHAKE_INFO": QUIC_HANDSHAKE_INFO,

	"QUIC_STREAM_TYPE_SERVER_MASK": QUIC_STREAM_TYPE_SERVER_MASK,
	"QUIC_STREAM_TYPE_UNI_MASK":    QUIC_STREAM_TYPE_UNI_MASK,
	"QUIC_STREAM_TYPE_MASK":        QUIC_STREAM_TYPE_MASK,

	"MSG_QUIC_STREAM_NEW":      MSG_QUIC_STREAM_NEW,
	"MSG_QUIC_STREAM_FIN":      MSG_QUIC_STREAM_FIN,
	"MSG_QUIC_STREAM_UNI":      MSG_QUIC_STREAM_UNI,
	"MSG_QUIC_STREAM_DONTWAIT": MSG_QUIC_STREAM_DONTWAIT,
	"MSG_QUIC_STREAM_SNDBLOCK": MSG_QUIC_STREAM_SNDBLOCK,
	"MSG_QUIC_DATAGRAM":        MSG_QUIC_DATAGRAM,
	"MSG_QUIC_NOTIFICATION":    MSG_QUIC_NOTIFICATION,

	"QUIC_CRYPTO_APP":       int64(QUIC_CRYPTO_APP),
	"QUIC_CRYPTO_INITIAL":   int64(QUIC_CRYPTO_INITIAL),
	"QUIC_CRYPTO_HANDSHAKE": int64(QUIC_CRYPTO_HANDSHAKE),
	"QUIC_CRYPTO_EARLY":     int64(QUIC_CRYPTO_EARLY),
	"QUIC_CRYPTO_MAX":       int64(QUIC_CRYPTO_MAX),

	"QUIC_SOCKOPT_EVENT":                QUIC_SOCKOPT_EVENT,
	"QUIC_SOCKOPT_STREAM_OPEN":          QUIC_SOCKOPT_STREAM_OPEN,
	"QUIC_SOCKOPT_STREAM_RESET":         QUIC_SOCKOPT_STREAM_RESET,
	"QUIC_SOCKOPT_STREAM_STOP_SENDING":  QUIC_SOCKOPT_STREAM_STOP_SENDING,
	"QUIC_SOCKOPT_CONNECTION_ID":        QUIC_SOCKOPT_CONNECTION_ID,
	"QUIC_SOCKOPT_CONNECTION_CLOSE":     QUIC_SOCKOPT_CONNECTION_CLOSE,
	"QUIC_SOCKOPT_CONNECTION_MIGRATION": QUIC_SOCKOPT_CONNECTION_MIGRATION,
	"QUIC_SOCKOPT_KEY_UPDATE":           QUIC_SOCKOPT_KEY_UPDATE,
	"QUIC_SOCKOPT_TRANSPORT_PARAM":      QUIC_SOCKOPT_TRANSPORT_PARAM,
	"QUIC_SOCKOPT_CONFIG":               QUIC_SOCKOPT_CONFIG,
	"QUIC_SOCKOPT_TOKEN":                QUIC_SOCKOPT_TOKEN,
	"QUIC_SOCKOPT_ALPN":                 QUIC_SOCKOPT_ALPN,
	"QUIC_SOCKOPT_SESSION_TICKET":       QUIC_SOCKOPT_SESSION_TICKET,
	"QUIC_SOCKOPT_CRYPTO_SECRET":        QUIC_SOCKOPT_CRYPTO_SECRET,
	"QUIC_SOCKOPT_TRANSPORT_PARAM_EXT":  QUIC_SOCKOPT_TRANSPORT_PARAM_EXT,

	"QUIC_VERSION_V1": QUIC_VERSION_V1,
	"QUIC_VERSION_V2": QUIC_VERSION_V2,

	"QUIC_CRYPTO_SECRET_BUFFER_SIZE": QUIC_CRYPTO_SECRET_BUFFER_SIZE,
	"QUIC_CLOSE_PHRASE_BUFFER_SIZE":  QUIC_CLOSE_PHRASE_BUFFER_SIZE,

	"QUIC_CONG_ALG_RENO":  int64(QUIC_CONG_ALG_RENO),
	"QUIC_CONG_ALG_CUBIC": int64(QUIC_CONG_ALG_CUBIC),
	"QUIC_CONG_ALG_MAX":   int64(QUIC_CONG_ALG_MAX),

	"QUIC_EVENT_NONE":                 int64(QUIC_EVENT_NONE),
	"QUIC_EVENT_STREAM_UPDATE":        int64(QUIC_EVENT_STREAM_UPDATE),
	"QUIC_EVENT_STREAM_MAX_DATA":      int64(QUIC_EVENT_STREAM_MAX_DATA),
	"QUIC_EVENT_STREAM_MAX_STREAM":    int64(QUIC_EVENT_STREAM_MAX_STREAM),
	"QUIC_EVENT_CONNECTION_ID":        int64(QUIC_EVENT_CONNECTION_ID),
	"QUIC_EVENT_CONNECTION_CLOSE":     int64(QUIC_EVENT_CONNECTION_CLOSE),
	"QUIC_EVENT_CONNECTION_MIGRATION": int64(QUIC_EVENT_CONNECTION_MIGRATION),
	"QUIC_EVENT_KEY_UPDATE":           int64(QUIC_EVENT_KEY_UPDATE),
	"QUIC_EVENT_NEW_TOKEN":            int64(QUIC_EVENT_NEW_TOKEN),
	"QUIC_EVENT_NEW_SESSION_TICKET":   int64(QUIC_EVENT_NEW_SESSION_TICKET),
	"QUIC_EVENT_MAX":                  int64(QUIC_EVENT_MAX),

	"QUIC_STREAM_SEND_STATE_READY":       int64(QUIC_STREAM_SEND_STATE_READY),
	"QUIC_STREAM_SEND_STATE_SEND":        int64(QUIC_STREAM_SEND_STATE_SEND),
	"QUIC_STREAM_SEND_STATE_SENT":        int64(QUIC_STREAM_SEND_STATE_SENT),
	"QUIC_STREAM_SEND_STATE_RECVD":       int64(QUIC_STREAM_SEND_STATE_RECVD),
	"QUIC_STREAM_SEND_STATE_RESET_SENT":  int64(QUIC_STREAM_SEND_STATE_RESET_SENT),
	"QUIC_STREAM_SEND_STATE_RESET_RECVD": int64(QUIC_STREAM_SEND_STATE_RESET_RECVD),
	"QUIC_STREAM_RECV_STATE_RECV":        int64(QUIC_STREAM_RECV_STATE_RECV),
	"QUIC_STREAM_RECV_STATE_SIZE_KNOWN":  int64(QUIC_STREAM_RECV_STATE_SIZE_KNOWN),
	"QUIC_STREAM_RECV_STATE_RECVD":       int64(QUIC_STREAM_RECV_STATE_RECVD),
	"QUIC_STREAM_RECV_STATE_READ":        int64(QUIC_STREAM_RECV_STATE_READ),
	"QUIC_STREAM_RECV_STATE_RESET_RECVD": int64(QUIC_STREAM_RECV_STATE_RESET_RECVD),
	"QUIC_STREAM_RECV_STATE_RESET_READ":  int64(QUIC_STREAM_RECV_STATE_RESET_READ),

	"QUIC_TRANSPORT_ERROR_NONE":                QUIC_TRANSPORT_ERROR_NONE,
	"QUIC_TRANSPORT_ERROR_INTERNAL":            QUIC_TRANSPORT_ERROR_INTERNAL,
	"QUIC_TRANSPORT_ERROR_CONNECTION_REFUSED":  QUIC_TRANSPORT_ERROR_CONNECTION_REFUSED,
	"QUIC_TRANSPORT_ERROR_FLOW_CONTROL":        QUIC_TRANSPORT_ERROR_FLOW_CONTROL,
	"QUIC_TRANSPORT_ERROR_STREAM_LIMIT":        QUIC_TRANSPORT_ERROR_STREAM_LIMIT,
	"QUIC_TRANSPORT_ERROR_STREAM_STATE":        QUIC_TRANSPORT_ERROR_STREAM_STATE,
	"QUIC_TRANSPORT_ERROR_FINAL_SIZE":          QUIC_TRANSPORT_ERROR_FINAL_SIZE,
	"QUIC_TRANSPORT_ERROR_FRAME_ENCODING":      QUIC_TRANSPORT_ERROR_FRAME_ENCODING,
	"QUIC_TRANSPORT_ERROR_TRANSPORT_PARAM":     QUIC_TRANSPORT_ERROR_TRANSPORT_PARAM,
	"QUIC_TRANSPORT_ERROR_CONNECTION_ID_LIMIT": QUIC_TRANSPORT_ERROR_CONNECTION_ID_LIMIT,
	"QUIC_TRANSPORT_ERROR_PROTOCOL_VIOLATION":  QUIC_TRANSPORT_ERROR_PROTOCOL_VIOLATION,
	"QUIC_TRANSPORT_ERROR_INVALID_TOKEN":       QUIC_TRANSPORT_ERROR_INVALID_TOKEN,
	"QUIC_TRANSPORT_ERROR_APPLICATION":         QUIC_TRANSPORT_ERROR_APPLICATION,
	"QUIC_TRANSPORT_ERROR_CRYPTO_BUF_EXCEEDED": QUIC_TRANSPORT_ERROR_CRYPTO_BUF_EXCEEDED,
	"QUIC_TRANSPORT_ERROR_KEY_UPDATE":          QUIC_TRANSPORT_ERROR_KEY_UPDATE,
	"QUIC_TRANSPORT_ERROR_AEAD_LIMIT_REACHED":  QUIC_TRANSPORT_ERROR_AEAD_LIMIT_REACHED,
	"QUIC_TRANSPORT_ERROR_NO_VIABLE_PATH":      QUIC_TRANSPORT_ERROR_NO_VIABLE_PATH,
	"QUIC_TRANSPORT_ERROR_VERSION_NEGOTIATION": QUIC_TRANSPORT_ERROR_VERSION_NEGOTIATION,
	"QUIC_TRANSPORT_ERROR_CRYPTO":              QUIC_TRANSPORT_ERROR_CRYPTO,
}

// libcSymbols resolves the <sys/socket.h> names quic.h aliases.
var libcSymbols = map[string]int64{
	"MSG_OOB": unix.MSG_OOB, "MSG_PEEK": unix.MSG_PEEK, "MSG_DONTROUTE": unix.MSG_DONTROUTE,
	"MSG_CTRUNC": unix.MSG_CTRUNC, "MSG_PROXY": unix.MSG_PROXY, "MSG_TRUNC": unix.MSG_TRUNC,
	"MSG_DONTWAIT": unix.MSG_DONTWAIT, "MSG_EOR": unix.MSG_EOR, "MSG_WAITALL": unix.MSG_WAITALL,
	"MSG_FIN": unix.MSG_FIN, "MSG_SYN": unix.MSG_SYN, "MSG_CONFIRM": unix.MSG_CONFIRM,
	"MSG_RST": unix.MSG_RST, "MSG_ERRQUEUE": unix.MSG_ERRQUEUE, "MSG_NOSIGNAL": unix.MSG_NOSIGNAL,
	"MSG_MORE": unix.MSG_MORE, "MSG_WAITFORONE": unix.MSG_WAITFORONE, "MSG_BATCH": unix.MSG_BATCH,
	"MSG_ZEROCOPY": unix.MSG_ZEROCOPY, "MSG_FASTOPEN": unix.MSG_FASTOPEN,
	"MSG_CMSG_CLOEXEC": unix.MSG_CMSG_CLOEXEC,
}

// cMember is a struct member as laid out by the x86-64 C ABI.
type cMember struct {
	name      string
	off, size int
}

// cHeader is what parseHeader found.
type cHeader struct {
	consts      map[string]int64
	structs     map[string][]cMember
	structSizes map[string]int
	unionParts  map[string][]string // union name → struct types of its members
}

var (
	reBlockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	reLineComment  = regexp.MustCompile(`//[^\n]*`)
	reDefine       = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\S.*?)[ \t]*$`)
	rePreproc      = regexp.MustCompile(`(?m)^[ \t]*#.*$`)
	reEnum         = regexp.MustCompile(`(?s)\benum\b\s*\w*\s*\{(.*?)\}`)
	reEnumItem     = regexp.MustCompile(`^(\w+)\s*(?:=\s*(.+))?$`)
	reStruct       = regexp.MustCompile(`(?s)\bstruct\s+(\w+)\s*\{(.*?)\}\s*;`)
	reUnion        = regexp.MustCompile(`(?s)\bunion\s+(\w+)\s*\{(.*?)\}\s*;`)
	reMember       = regexp.MustCompile(`^(__[us](?:8|16|32|64))\s+(\w+)\s*(?:\[\s*(\w+)\s*\])?$`)
	reUnionStruct  = regexp.MustCompile(`^struct\s+(\w+)\s+\w+$`)
)

// parseHeader reads the #defines with a value, the enum members, and the
// layout of the structs of a UAPI header. It understands only the constructs
// quic.h uses, and reports anything else it meets in a struct as an error.
func parseHeader(src string) (*cHeader, error) {
	src = reBlockComment.ReplaceAllString(src, " ")
	src = reLineComment.ReplaceAllString(src, "")
	h := &cHeader{
		consts:      map[string]int64{},
		structs:     map[string][]cMember{},
		structSizes: map[string]int{},
		unionParts:  map[string][]string{},
	}
	eval := func(v string) (int64, error) {
		v = strings.TrimSpace(v)
		if n, err := strconv.ParseInt(v, 0, 64); err == nil {
			return n, nil
		}
		if n, ok := h.consts[v]; ok {
			return n, nil
		}
		if n, ok := libcSymbols[v]; ok {
			return n, nil
		}
		return 0, fmt.Errorf("cannot evaluate %q", v)
	}
	for _, m := range reDefine.FindAllStringSubmatch(src, -1) {
		if m[1] == m[2] { // "#define IPPROTO_QUIC IPPROTO_QUIC" names an enum member
			continue
		}
		n, err := eval(m[2])
		if err != nil {
			return nil, fmt.Errorf("#define %s: %v", m[1], err)
		}
		h.consts[m[1]] = n
	}
	src = rePreproc.ReplaceAllString(src, "")
	for _, m := range reEnum.FindAllStringSubmatch(src, -1) {
		next := int64(0)
		for item := range strings.SplitSeq(m[1], ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			im := reEnumItem.FindStringSubmatch(item)
			if im == nil {
				return nil, fmt.Errorf("enum member %q not understood", item)
			}
			if im[2] != "" {
				n, err := eval(im[2])
				if err != nil {
					return nil, fmt.Errorf("enum member %s: %v", im[1], err)
				}
				next = n
			}
			h.consts[im[1]] = next
			next++
		}
	}
	for _, m := range reStruct.FindAllStringSubmatch(src, -1) {
		name, off, maxAlign := m[1], 0, 1
		var members []cMember
		for decl := range strings.SplitSeq(m[2], ";") {
			decl = strings.Join(strings.Fields(decl), " ")
			if decl == "" {
				continue
			}
			mm := reMember.FindStringSubmatch(decl)
			if mm == nil {
				return nil, fmt.Errorf("struct %s: member %q not understood", name, decl)
			}
			elem, _ := strconv.Atoi(strings.TrimLeft(mm[1], "_us"))
			elem /= 8
			count := int64(1)
			if mm[3] != "" {
				n, err := eval(mm[3])
				if err != nil {
					return nil, fmt.Errorf("struct %s: member %s: %v", name, mm[2], err)
				}
				count = n
			}
			off = (off + elem - 1) / elem * elem // natural alignment, as on x86-64
			maxAlign = max(maxAlign, elem)
			members = append(members, cMember{mm[2], off, elem * int(count)})
			off += elem * int(count)
		}
		h.structs[name] = members
		h.structSizes[name] = (off + maxAlign - 1) / maxAlign * maxAlign
	}
	for _, m := range reUnion.FindAllStringSubmatch(src, -1) {
		for decl := range strings.SplitSeq(m[2], ";") {
			decl = strings.Join(strings.Fields(decl), " ")
			if um := reUnionStruct.FindStringSubmatch(decl); um != nil {
				h.unionParts[m[1]] = append(h.unionParts[m[1]], um[1])
			} else if decl != "" && reMember.FindStringSubmatch(decl) == nil {
				return nil, fmt.Errorf("union %s: member %q not understood", m[1], decl)
			}
		}
	}
	return h, nil
}

func TestHeaderParser(t *testing.T) {
	h, err := parseHeader(`
/* comment with enum { X = 1 } and struct y { __u8 z; }; */
#define A_SIZE 4 // trailing comment
#define B	0x10
enum { E0, E1, E5 = 5, E6, EM = MSG_MORE, EA = A_SIZE,
#define E0 E0
};
struct s {
	__u8	a;
	__u32	b;
	__u8	c[A_SIZE];
#define INNER 3
	__s64	d;
	__u16	e;
};
union u { struct s one; __u8 two; };
`)
	if err != nil {
		t.Fatal(err)
	}
	wantConsts := map[string]int64{"A_SIZE": 4, "B": 16, "INNER": 3, "E0": 0, "E1": 1, "E5": 5, "E6": 6, "EM": 0x8000, "EA": 4}
	if fmt.Sprint(h.consts) != fmt.Sprint(wantConsts) {
		t.Errorf("consts %v, want %v", h.consts, wantConsts)
	}
	wantS := []cMember{{"a", 0, 1}, {"b", 4, 4}, {"c", 8, 4}, {"d", 16, 8}, {"e", 24, 2}}
	if fmt.Sprint(h.structs["s"]) != fmt.Sprint(wantS) || h.structSizes["s"] != 32 {
		t.Errorf("struct s: %v size %d, want %v size 32", h.structs["s"], h.structSizes["s"], wantS)
	}
	if fmt.Sprint(h.unionParts) != "map[u:[s]]" {
		t.Errorf("union parts %v", h.unionParts)
	}
	if _, err := parseHeader("struct t { int x; };"); err == nil {
		t.Error("unknown member type accepted")
	}
	if _, err := parseHeader("enum { A = FOO };"); err == nil {
		t.Error("unknown symbol accepted")
	}
}

// readOptional returns the file at path, or skips the test if it is absent.
func readOptional(t *testing.T, path, why string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist: %s", path, why)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// uapiHeader finds the module's quic.h, or says why it cannot.
func uapiHeader() (path, why string) {
	if p := os.Getenv("KQUIC_UAPI_HEADER"); p != "" {
		return p, ""
	}
	mod := os.Getenv("KQUIC_MODULE")
	if mod == "" {
		return "", "the module's UAPI header is not committed to this repository: set KQUIC_MODULE to a quic.ko inside its built source tree, or KQUIC_UAPI_HEADER to its include/uapi/linux/quic.h, to check quicabi against it"
	}
	if p := headerNear(mod); p != "" {
		return p, ""
	}
	return "", fmt.Sprintf("KQUIC_MODULE=%s is not inside the module's source tree (no include/uapi/linux/quic.h above it): set KQUIC_UAPI_HEADER to check quicabi against its header", mod)
}

// headerNear looks for the UAPI header in the directories above a module
// file (following a symbolic link to the file first).
func headerNear(mod string) string {
	if real, err := filepath.EvalSymlinks(mod); err == nil {
		mod = real
	}
	abs, err := filepath.Abs(mod)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		for _, rel := range []string{"modules/include/uapi/linux/quic.h", "include/uapi/linux/quic.h"} {
			if st, err := os.Stat(filepath.Join(d, rel)); err == nil && st.Mode().IsRegular() {
				return filepath.Join(d, rel)
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// TestHeaderNear: the header is found from a module anywhere in its tree,
// and not from a module copied out of it.
func TestHeaderNear(t *testing.T) {
	tree := t.TempDir()
	hdr := filepath.Join(tree, "modules/include/uapi/linux/quic.h")
	ko := filepath.Join(tree, "modules/net/quic/quic.ko")
	for _, f := range []string{hdr, ko} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, nil, 0o644)
	}
	if got := headerNear(ko); got != hdr {
		t.Errorf("headerNear(%s) = %q, want %q", ko, got, hdr)
	}
	link := filepath.Join(t.TempDir(), "quic.ko")
	os.Symlink(ko, link)
	if got := headerNear(link); got != hdr {
		t.Errorf("headerNear(symlink to the tree's module) = %q, want %q", got, hdr)
	}
	alone := filepath.Join(t.TempDir(), "quic.ko")
	os.WriteFile(alone, nil, 0o644)
	if got := headerNear(alone); got != "" {
		t.Errorf("headerNear(a copy outside any tree) = %q", got)
	}
}

// TestHeaderMatches compares every number and struct layout of this package
// with the module's UAPI header, to catch drift when the module changes.
func TestHeaderMatches(t *testing.T) {
	path, why := uapiHeader()
	if path == "" {
		t.Skip(why)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the module's UAPI header: %v", err)
	}
	src := string(b)
	h, err := parseHeader(src)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	if len(h.consts) < len(abiConsts)/2 || len(h.structs) < len(layouts)/2 {
		t.Fatalf("parsing %s found only %d constants and %d structs; the parser needs updating", path, len(h.consts), len(h.structs))
	}

	var names []string
	for n := range h.consts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ours, ok := abiConsts[n]
		switch {
		case !ok:
			t.Errorf("header defines %s = %#x, which quicabi lacks", n, h.consts[n])
		case ours != h.consts[n]:
			t.Errorf("%s: header %#x, quicabi %#x", n, h.consts[n], ours)
		}
	}
	for n := range abiConsts {
		if _, ok := h.consts[n]; !ok {
			t.Errorf("quicabi defines %s, which the header does not", n)
		}
	}

	ours := map[string]layoutCase{}
	for _, c := range layouts {
		ours[c.cname] = c
	}
	for name, members := range h.structs {
		c, ok := ours[name]
		if !ok {
			t.Errorf("header has struct %s, which quicabi lacks", name)
			continue
		}
		if h.structSizes[name] != c.size {
			t.Errorf("struct %s: header size %d, quicabi %d", name, h.structSizes[name], c.size)
		}
		var want []cMember
		for _, f := range c.fields {
			want = append(want, cMember{f.cname, f.off, f.size})
		}
		if got := fmt.Sprint(members); got != fmt.Sprint(want) {
			t.Errorf("struct %s members (name offset size):\nheader  %v\nquicabi %v", name, got, want)
		}
	}
	for name := range ours {
		if _, ok := h.structs[name]; !ok {
			t.Errorf("quicabi has struct %s, which the header does not", name)
		}
	}
	t.Logf("checked %d constants and %d structs against %s", len(h.consts), len(h.structs), path)
	for union, parts := range h.unionParts {
		for _, p := range parts {
			if _, ok := ours[p]; !ok {
				t.Errorf("union %s has member struct %s, which quicabi lacks", union, p)
			}
		}
	}
}

// TestTLSHeaderCiphers checks the cipher ids against <linux/tls.h>, where
// they come from, if the system has it.
func TestTLSHeaderCiphers(t *testing.T) {
	const path = "/usr/include/linux/tls.h"
	src := readOptional(t, path, "install the Linux UAPI headers (linux-libc-dev) to check the TLS_CIPHER_* ids")
	defs := map[string]string{}
	for _, m := range reDefine.FindAllStringSubmatch(reBlockComment.ReplaceAllString(src, " "), -1) {
		defs[m[1]] = m[2]
	}
	for name, ours := range map[string]CipherType{
		"TLS_CIPHER_AES_GCM_128":       TLS_CIPHER_AES_GCM_128,
		"TLS_CIPHER_AES_GCM_256":       TLS_CIPHER_AES_GCM_256,
		"TLS_CIPHER_AES_CCM_128":       TLS_CIPHER_AES_CCM_128,
		"TLS_CIPHER_CHACHA20_POLY1305": TLS_CIPHER_CHACHA20_POLY1305,
	} {
		if v, ok := defs[name]; !ok || v != strconv.Itoa(int(ours)) {
			t.Errorf("%s: %s has %q, quicabi %d", name, path, v, ours)
		}
	}
}
