package scoring

import (
	"math"
	"testing"
)

func TestRerankLift(t *testing.T) {
	tests := []struct {
		name          string
		output, input []bool
		want          Lift
		ok            bool
	}{
		// Cohere's end-to-end case: output Paris, Oslo, Seine; input
		// bananas, Paris, Oslo, Seine, compared on its first three.
		{"moved up", []bool{true, false, true}, []bool{false, true, false, true},
			Lift{InputCP: 0.5, InputNDCG: 1 / math.Log2(3), Value: 5.0/6 - 0.5}, true},
		{"made worse", []bool{false, true}, []bool{true, false},
			Lift{InputCP: 1, InputNDCG: 1, Value: -0.5}, true},
		{"unchanged", []bool{true, true, false}, []bool{true, true, false},
			Lift{InputCP: 1, InputNDCG: 1, Value: 0}, true},
		{"nothing relevant", []bool{false, false}, []bool{false, false, false},
			Lift{InputCP: 0, InputNDCG: 0, Value: 0}, true},
		// Relevant documents only below the input's first K: CP 0 in, all
		// of the output's CP is lift.
		{"from below K", []bool{true}, []bool{false, false, true},
			Lift{InputCP: 0, InputNDCG: 0, Value: 1}, true},
		{"no output", nil, []bool{true}, Lift{}, false},
		{"no input", []bool{true}, nil, Lift{}, false},
		{"input shorter than output", []bool{true, false}, []bool{true}, Lift{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RerankLift(tt.output, tt.input)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if math.Abs(got.InputCP-tt.want.InputCP) > 1e-12 || math.Abs(got.InputNDCG-tt.want.InputNDCG) > 1e-12 ||
				math.Abs(got.Value-tt.want.Value) > 1e-12 {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
