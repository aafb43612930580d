//go:build !linux

package perftest

import (
	"errors"
	"os"
)

func processCost(*os.ProcessState) (Cost, bool) { return Cost{}, false }

func liveCost(int) (Cost, error) {
	return Cost{}, errors.New("perftest: process counters are read from Linux's /proc")
}
