module service-sandbox/clients/go

go 1.19
