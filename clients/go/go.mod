module service-sandbox.dev/go

go 1.19
