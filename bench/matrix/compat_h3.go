package matrix

func (s *Spec) validateMTUs() []error        { return s.CheckMTUs() }
func (s *Spec) validateImpairments() []error { return s.CheckImpairments() }
