package matrix

// ModeBulk is the default mode: the goodput of streams in one direction.
const ModeBulk = Mode("bulk")

func init() {
	if err := RegisterModeSpec(ModeBulk, ModeSpec{Default: true, About: "goodput of streams in one direction"}); err != nil {
		panic(err)
	}
}
