package auth

import (
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AccessToken is a signed user access token and its expiry.
type AccessToken struct {
	Token     string
	ExpiresAt time.Time
}

// SignAccessToken issues a user access token with Supabase Auth's claims (sub, aud, role, email, phone,
// app_metadata, user_metadata, aal, amr, session_id, is_anonymous, iss, iat, exp). iss is left out when empty.
func (k *Keys) SignAccessToken(user *User, sess *Session, issuer string, lifetime time.Duration, now time.Time) (AccessToken, error) {
	exp := now.Add(lifetime)
	amr := sess.AMR
	if amr == nil {
		amr = []AMREntry{}
	}
	claims := jwt.MapClaims{
		"sub":           user.ID.String(),
		"aud":           user.Aud,
		"exp":           exp.Unix(),
		"iat":           now.Unix(),
		"email":         user.Email,
		"phone":         user.Phone,
		"app_metadata":  user.AppMetadata,
		"user_metadata": user.UserMetadata,
		"role":          user.Role,
		"aal":           sess.AAL,
		"amr":           amr,
		"session_id":    sess.ID.String(),
		"is_anonymous":  user.IsAnonymous,
	}
	if issuer != "" {
		claims["iss"] = issuer
	}
	tok, err := k.SignUser(claims)
	if err != nil {
		return AccessToken{}, err
	}
	return AccessToken{Token: tok, ExpiresAt: time.Unix(exp.Unix(), 0)}, nil
}
