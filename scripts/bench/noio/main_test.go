package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	shortlink "github.com/shortlink/terraform-provider-shortlink/internal/provider"
)

// noio_link is a floor for shortlink_link only while their schemas and
// identities are the same, as Terraform receives them.
func TestSchemaIsShortlinkLinks(t *testing.T) {
	ctx := context.Background()
	ours := shortlink.NewServer("test")()
	noio := providerserver.NewProtocol6(newProvider())()

	schemas := func(s tfprotov6.ProviderServer) *tfprotov6.GetProviderSchemaResponse {
		resp, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
		}
		return resp
	}
	want, got := schemas(ours).ResourceSchemas["shortlink_link"], schemas(noio).ResourceSchemas["noio_link"]
	if want == nil || got == nil {
		t.Fatalf("shortlink_link %v, noio_link %v", want != nil, got != nil)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("noio_link's schema differs from shortlink_link's:\n%+v\n%+v", got.Block, want.Block)
	}

	identities := func(s tfprotov6.ProviderServer) map[string]*tfprotov6.ResourceIdentitySchema {
		resp, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("GetResourceIdentitySchemas: %v %v", err, resp.Diagnostics)
		}
		return resp.IdentitySchemas
	}
	if want, got := identities(ours)["shortlink_link"], identities(noio)["noio_link"]; want == nil || !reflect.DeepEqual(want, got) {
		t.Errorf("noio_link's identity %+v differs from shortlink_link's %+v", got, want)
	}
}
