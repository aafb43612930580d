// Package modbuild builds the out-of-tree kernel module(s) of a source tree
// (kbuild's `make -C <kernel build tree> M=<module dir> modules`) for the
// guest kernel: Debian's, in a build root made once with debootstrap and
// kept in the cache directory (the release's compiler and the kernel's
// linux-headers package), or a kernel build tree the user names, with the
// host's compiler. Builds are cached by the source's content, the kernel and
// the make variables, and kept in a directory named by the modules' code
// (kmod.CodeHash), so two builds of the same code are one.
package modbuild
