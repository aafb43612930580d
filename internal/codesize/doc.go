// Package codesize holds the repository's size rules as a test: no
// function outside tests over 100 lines and no file over 500, so that a
// reader finds a thing's parts where they would look for them (issue 35's
// review). It has no code of its own.
package codesize
