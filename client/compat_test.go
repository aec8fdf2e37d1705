package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	flurryv1 "github.com/flurryid/flurry/api/flurryv1"
)

// oldNext returns IDService.Next as it was before packed_ids: the generated
// descriptor less NextRequest.packed_ids and NextResponse.packed_ids. Messages
// of it are what clients and servers built before the field send and read.
func oldNext(t *testing.T) protoreflect.MethodDescriptor {
	t.Helper()
	fdp := protodesc.ToFileDescriptorProto(flurryv1.File_flurry_v1_flurry_proto)
	for _, m := range fdp.MessageType {
		if m.GetName() == "NextRequest" || m.GetName() == "NextResponse" {
			m.Field = slices.DeleteFunc(m.Field, func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetName() == "packed_ids" })
		}
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Services().ByName("IDService").Methods().ByName("Next")
	if md.Input().Fields().ByName("packed_ids") != nil || md.Output().Fields().ByName("packed_ids") != nil {
		t.Fatal("the old descriptor still has packed_ids")
	}
	return md
}

func dynamicInit(spec connect.Spec, msg any) error {
	d, ok := msg.(*dynamicpb.Message)
	if !ok {
		return nil
	}
	md := spec.Schema.(protoreflect.MethodDescriptor)
	if spec.IsClient {
		*d = *dynamicpb.NewMessage(md.Output())
	} else {
		*d = *dynamicpb.NewMessage(md.Input())
	}
	return nil
}

// TestOldClientNewServer: a client that does not know packed_ids gets its IDs in
// ids from the real server, over both transports, and nothing it cannot read.
func TestOldClientNewServer(t *testing.T) {
	md := oldNext(t)
	url := startRealServer(t)
	for _, tr := range []Transport{HTTP, GRPC} {
		opts := []connect.ClientOption{connect.WithSchema(md), connect.WithResponseInitializer(dynamicInit)}
		if tr == GRPC {
			opts = append(opts, connect.WithGRPC())
		}
		hc := newHTTPClient(tr)
		defer hc.CloseIdleConnections()
		old := connect.NewClient[dynamicpb.Message, dynamicpb.Message](hc, url+"/flurry.v1.IDService/Next", opts...)
		req := dynamicpb.NewMessage(md.Input())
		req.Set(md.Input().Fields().ByName("namespace"), protoreflect.ValueOfString("default"))
		req.Set(md.Input().Fields().ByName("count"), protoreflect.ValueOfUint32(500))
		res, err := old.CallUnary(context.Background(), connect.NewRequest(req))
		if err != nil {
			t.Fatalf("%v: %v", tr, err)
		}
		ids := res.Msg.Get(md.Output().Fields().ByName("ids")).List()
		if ids.Len() != 500 {
			t.Fatalf("%v: %d IDs in ids, want 500", tr, ids.Len())
		}
		for i := 1; i < ids.Len(); i++ {
			if ids.Get(i).Int() <= ids.Get(i-1).Int() {
				t.Fatalf("%v: ID %d after %d", tr, ids.Get(i).Int(), ids.Get(i-1).Int())
			}
		}
		if u := res.Msg.GetUnknown(); len(u) != 0 {
			t.Errorf("%v: the server sent fields an old client does not know: %x", tr, u)
		}
	}
}

// TestNewClientOldServer: against a server that does not know packed_ids (it
// reads the request with the old descriptor and answers in ids), the client
// sends the flag, which the old server keeps as an unknown field, and reads ids.
func TestNewClientOldServer(t *testing.T) {
	md := oldNext(t)
	next := int64(1000)
	var mu sync.Mutex // the server's requests run concurrently
	var flagged, requests int
	handler := func(_ context.Context, req *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		if len(req.Msg.GetUnknown()) > 0 {
			flagged++
		}
		n := int(req.Msg.Get(md.Input().Fields().ByName("count")).Uint())
		res := dynamicpb.NewMessage(md.Output())
		res.Set(md.Output().Fields().ByName("namespace"), req.Msg.Get(md.Input().Fields().ByName("namespace")))
		ids := res.Mutable(md.Output().Fields().ByName("ids")).List()
		for range n {
			next++
			ids.Append(protoreflect.ValueOfInt64(next))
		}
		return connect.NewResponse(res), nil
	}
	mux := http.NewServeMux()
	mux.Handle("/flurry.v1.IDService/Next", connect.NewUnaryHandler("/flurry.v1.IDService/Next", handler,
		connect.WithSchema(md), connect.WithRequestInitializer(dynamicInit)))
	ts := httptest.NewUnstartedServer(mux)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = &p
	ts.Start()
	defer ts.Close()
	for _, tr := range []Transport{HTTP, GRPC} {
		t.Run(fmt.Sprint(tr), func(t *testing.T) {
			c, err := New(Options{Servers: []string{ts.URL}, Transport: tr, Batch: 100})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			prev := int64(0)
			for range 250 {
				id, err := c.Next(context.Background(), "default")
				if err != nil {
					t.Fatal(err)
				}
				if int64(id) <= prev {
					t.Fatalf("ID %d after %d", id, prev)
				}
				prev = int64(id)
			}
			ids, _, err := c.Fetch(context.Background(), "default", 3)
			if err != nil || len(ids) != 3 || int64(ids[0]) <= prev {
				t.Fatalf("Fetch: %v %v", ids, err)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if requests == 0 || flagged != requests {
		t.Errorf("%d of %d requests carried packed_ids (an unknown field to an old server)", flagged, requests)
	}
}
