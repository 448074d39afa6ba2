package benchcmp

import "slices"

// SlotOrder is the order in which round r runs the contenders named in names (given in the run's order) on one
// query, as indexes into names. pgreflect and the two ceilings run first and back to back, pgreflect always
// next to the plain ceiling, the order among them turning over every four rounds (pgreflect first in half of
// them, the ceiling with duties before the pair in half): the ratios read off them compare slots run within
// seconds of each other, whatever the machine's other work does meanwhile. The other contenders follow, their
// order rotating per round.
func SlotOrder(names []string, r int) []int {
	// The contenders run first and next to each other, in the order of their indexes in turns below.
	backToBack := []string{"pgreflect", "ceiling", "ceiling-duties"}
	var near, rest []int
	for _, want := range backToBack {
		if i := slices.Index(names, want); i >= 0 {
			near = append(near, i)
		}
	}
	for i, name := range names {
		if !slices.Contains(backToBack, name) {
			rest = append(rest, i)
		}
	}
	order := make([]int, 0, len(names))
	switch len(near) {
	case 3: // pgreflect, ceiling, ceiling-duties
		turns := [4][3]int{{0, 1, 2}, {1, 0, 2}, {2, 0, 1}, {2, 1, 0}}
		for _, k := range turns[r%4] {
			order = append(order, near[k])
		}
	case 2:
		order = append(order, near[r%2], near[(r+1)%2])
	default:
		order = append(order, near...)
	}
	for k := range rest {
		order = append(order, rest[(k+r)%len(rest)])
	}
	return order
}
