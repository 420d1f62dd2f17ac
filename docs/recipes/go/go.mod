module example.com/sandbox-recipe

go 1.19

require service-sandbox.dev/go v0.2.0

// The Go kit of this checkout (docs/clients.md#go): no module is downloaded.
replace service-sandbox.dev/go => ../../../clients/go
