package openai

// Provider names, as written before the colon of "provider:model".
const (
	ProviderOpenAI    = "openai"
	ProviderAzure     = "azure"
	ProviderAnthropic = "anthropic"
	ProviderGoogle    = "google"
	ProviderOllama    = "ollama"
)

// Provider is what routing needs to know about a provider's
// OpenAI-compatible endpoint. An OpenAI-compatible provider is one entry of
// Providers.
type Provider struct {
	Name string
	// BaseURL is the endpoint used when none is configured; "" means the
	// provider has no default (each Azure resource has its own) and one is
	// required.
	BaseURL string
	// NeedsKey reports whether a request without an API key can be expected
	// to fail, so that a missing key is a start-up error instead of a
	// stream of 401s.
	NeedsKey bool
	// JSONSchema reports whether the endpoint honours a json_schema
	// response format. Anthropic's compatibility layer ignores it, so there
	// the contract is carried by the prompt alone.
	JSONSchema bool
}

// Providers lists the providers, in the order error messages show them.
var Providers = []Provider{
	{Name: ProviderOpenAI, BaseURL: "https://api.openai.com/v1", NeedsKey: true, JSONSchema: true},
	{Name: ProviderAzure, BaseURL: "", NeedsKey: true, JSONSchema: true},
	{Name: ProviderAnthropic, BaseURL: "https://api.anthropic.com/v1/", NeedsKey: true, JSONSchema: false},
	{Name: ProviderGoogle, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai/", NeedsKey: true, JSONSchema: true},
	{Name: ProviderOllama, BaseURL: "http://localhost:11434/v1", NeedsKey: false, JSONSchema: true},
}

// ProviderNamed is the provider called name, if there is one.
func ProviderNamed(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// DefaultAzureAPIVersion is the Azure OpenAI GA api-version that supports
// json_schema response formats.
const DefaultAzureAPIVersion = "2024-10-21"
