module example.com/notportable

go 1.26
