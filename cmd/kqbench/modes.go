package main

// Every mode and driver: what they measure, how their results read.
import _ "kquic.dev/bench/mode/all"
