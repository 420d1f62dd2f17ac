module example.com/sandbox-recipe

go 1.19
