package openai

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
)

// promptsHash is a hash of everything PromptVersion names: the system
// prompts, the messages built for fixed texts, the reply schemas.
func promptsHash(t *testing.T) string {
	t.Helper()
	schemas, err := json.Marshal([]any{verdictSchema, batchedSchema})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, part := range []string{systemPerChunk, systemBatched,
		perChunkMessage("q?", "ref", "criteria", "chunk"), batchedMessage("q?", "ref", "", []string{"a", "b"}), string(schemas)} {
		fmt.Fprintf(h, "%d\x00%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// A prompt that changes under the same PromptVersion would keep serving
// cached verdicts of the old one and keep its judge_version: change
// PromptVersion with the prompt, and this hash with it.
func TestPromptVersionNamesThePrompts(t *testing.T) {
	const version, hash = "cp-2026-11-v2", "5ed8208deb1414e6"
	if got := promptsHash(t); PromptVersion != version || got != hash {
		t.Errorf("PromptVersion %q, prompts hash %s; pinned: %q, %s. If the prompts changed, change PromptVersion and pin both here", PromptVersion, got, version, hash)
	}
}
