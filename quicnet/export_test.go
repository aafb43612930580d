package quicnet

// ForgetChoices makes the next choice of Auto logged again, as the first
// of the process.
func ForgetChoices() { chosen.Clear() }
