package evalset

import (
	"reflect"
	"testing"
)

func TestNaive(t *testing.T) {
	judge := Naive(NaiveThreshold)
	// Distinct non-stop words of query + reference: "kiss", "tell", "1945",
	// "film", "shirley", "temple": a chunk needs three of them.
	got, err := judge("Kiss and Tell: was it a 1945 film?", "Shirley Temple",
		[]string{"Kiss and Tell is a 1945 film.", "Shirley Temple starred in a film.", "Kiss me.", ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("naive verdicts %v, want %v", got, want)
	}
	got, _ = judge("Is it?", "", []string{"It is."})
	if got[0] {
		t.Error("no content words: judged relevant")
	}
}
