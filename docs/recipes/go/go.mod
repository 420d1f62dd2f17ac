module example.com/sandbox-recipe

go 1.19

require service-sandbox/clients/go v0.0.0

// The Go kit of this checkout (docs/clients.md#go): no module is downloaded.
replace service-sandbox/clients/go => ../../../clients/go
