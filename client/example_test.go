package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/flurryid/flurry/client"
)

// Compile-only: it needs running servers.
func ExampleClient_Next() {
	c, err := client.New(client.Options{
		Servers: []string{"http://10.0.0.1:8080", "http://10.0.0.2:8080"},
		Token:   "a-token-of-16-or-more-characters",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	id, err := c.Next(ctx, "orders")
	switch {
	case errors.Is(err, client.ErrUnavailable):
		// Every server failed; err is a *client.Error with each server's cause.
		log.Print(err)
	case errors.Is(err, client.ErrUnknownNamespace), errors.Is(err, client.ErrUnauthenticated):
		log.Fatal(err) // configuration: retrying will not help
	case err != nil:
		log.Print(err) // ctx ended while waiting for a refill
	default:
		fmt.Println(id)
	}
}

// Compile-only: a handle skips the lookup by name on every call.
func ExampleNamespace_Next() {
	c, err := client.New(client.Options{Servers: []string{"127.0.0.1:8080"}, Transport: client.GRPC, Batch: 10_000})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	orders := c.Namespace("orders")
	for range 3 {
		id, err := orders.Next(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(id)
	}
}

func ExampleParseServers() {
	servers, err := client.ParseServers("10.0.0.1:8080, https://ids.example.com/flurry/")
	fmt.Println(servers, err)
	// Output: [http://10.0.0.1:8080 https://ids.example.com/flurry] <nil>
}
