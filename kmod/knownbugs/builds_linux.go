package knownbugs

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kquic.dev/kmod"
)

// ModuleEnv names the variable that points at a built quic.ko.
const ModuleEnv = "KQUIC_MODULE"

// Builds identifies the QUIC module in every way it can: the loaded
// module's GNU build ID ("build-id:…", exact for one binary, but it changes
// with the folder the module was built in, since the linker hashes the
// debug information too), then FileBuilds of the module file (file, or
// $KQUIC_MODULE where file is "").
func Builds(file string) []string {
	var ids []string
	if m, err := kmod.Loaded("quic"); err == nil && m.BuildID != "" {
		ids = append(ids, "build-id:"+m.BuildID)
	}
	if file == "" {
		file = os.Getenv(ModuleEnv)
	}
	return append(ids, FileBuilds(file)...)
}

// FileBuilds names a module file: the lxin/quic commit of the git checkout
// it lies in ("lxin/quic@03a9c7cdb2d5", "+dirty" when the tree has changes;
// the same for every build of that source), if any; and its code ("code:…",
// kmod.CodeHash: its loaded sections and their relocations, the same for
// every build of one source against one kernel with one compiler, in
// whatever folder), or the file's SHA-256 ("sha256:…") where it cannot be
// read as ELF. Nil for "".
func FileBuilds(mod string) []string {
	if mod == "" {
		return nil
	}
	if real, err := filepath.EvalSymlinks(mod); err == nil {
		mod = real
	}
	var ids []string
	if id := sourceCommit(mod); id != "" {
		ids = append(ids, id)
	}
	if code, err := kmod.ModuleCodeHash(mod); err == nil {
		return append(ids, "code:"+code)
	}
	f, err := os.Open(mod)
	if err != nil {
		return ids
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ids
	}
	return append(ids, "sha256:"+hex.EncodeToString(h.Sum(nil))[:16])
}

// sourceCommit is the commit of the lxin/quic checkout the module file
// lies in ("lxin/quic@…", "+dirty" with changes), or "" outside one.
func sourceCommit(mod string) string {
	dir, _ := filepath.Abs(filepath.Dir(mod))
	for d := dir; ; d = filepath.Dir(d) {
		// A checkout of lxin/quic (its module under modules/net/quic), not
		// any repository the file lies in (a cache inside another project).
		_, gerr := os.Stat(filepath.Join(d, ".git"))
		if st, err := os.Stat(filepath.Join(d, "modules", "net", "quic")); gerr == nil && err == nil && st.IsDir() {
			out, err := exec.Command("git", "-C", d, "rev-parse", "HEAD").Output()
			if err != nil || len(strings.TrimSpace(string(out))) < 12 {
				return ""
			}
			id := "lxin/quic@" + strings.TrimSpace(string(out))[:12]
			if st, err := exec.Command("git", "-C", d, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
				id += "+dirty"
			}
			return id
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
