package testidp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/pgreflect/pgreflect/oidc"
	"github.com/pgreflect/pgreflect/testidp"
)

// A test starts a provider, signs in a user of its choosing, and mints the token a rule must refuse: here the
// relying party (package oidc, as pgreflect's sign-in uses it) accepts the provider's ID token for the user and
// refuses an expired one.
func Example() {
	idp, err := testidp.New(testidp.Options{ClientID: "my-app", ClientSecret: "my-secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer idp.Close()
	provider := oidc.Provider{Name: "google", Issuer: idp.URL(), ClientIDs: []string{"my-app"}, Secret: "my-secret", SkipNonceCheck: true}
	client := oidc.NewClient(nil)
	ctx := context.Background()

	ada := testidp.User{Sub: "1001", Email: "ada@example.com", EmailVerified: true, Name: "Ada"}
	token := idp.MintIDToken(idp.Claims(ada), testidp.MintOptions{})
	identity, err := client.VerifyIDToken(ctx, provider, token, "", "")
	fmt.Println(identity.Subject, identity.Email, err)

	expired := idp.Claims(ada)
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	_, err = client.VerifyIDToken(ctx, provider, idp.MintIDToken(expired, testidp.MintOptions{}), "", "")
	var refused *oidc.IDTokenError
	fmt.Println(errors.As(err, &refused))
	// Output:
	// 1001 ada@example.com <nil>
	// true
}
