package openai

// What the tests of package openai_test need to see of the backend.
const (
	SystemPerChunk = systemPerChunk
	SystemBatched  = systemBatched
)

// SendTemperature makes b send a temperature again, as before it learned
// or guessed that its model takes none.
func SendTemperature(b *Backend) { b.noTemperature.Store(false) }
