package auth

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ExternalIdentity is what a provider told us about the person signing in.
type ExternalIdentity struct {
	Provider      string
	Subject       string // the provider's sub, stored as identities.provider_id
	Email         string
	EmailVerified bool
	// Data becomes identities.identity_data and is merged into users.raw_user_meta_data.
	Data map[string]any
}

// SignInPolicy carries the configuration that decides whether a new account may be created.
type SignInPolicy struct {
	EnableSignup bool
}

// Defaults of new accounts (GOTRUE_JWT_AUD and GOTRUE_JWT_DEFAULT_GROUP_NAME as the Supabase CLI sets them).
const (
	DefaultAudience = "authenticated"
	DefaultRole     = "authenticated"
)

// AMRMethodOAuth is the authentication method of every external-provider sign-in.
const AMRMethodOAuth = "oauth"

// upsertExternalUser finds, links or creates the account of an external identity, following Supabase Auth's
// account-linking rules: a known identity signs in its user; otherwise a verified email links to the one user
// that already has it; otherwise a new user is created. It returns ErrEmailNeedsVerification (with the user
// written) when the resulting user's email is still unconfirmed.
func upsertExternalUser(ctx context.Context, tx pgx.Tx, ext ExternalIdentity, policy SignInPolicy) (*User, error) {
	email := normalizeEmail(ext.Email)
	data := map[string]any{}
	for k, v := range ext.Data {
		data[k] = v
	}
	if email != "" {
		data["email"] = email
	}
	var userID uuid.UUID
	err := tx.QueryRow(ctx, `SELECT user_id FROM auth.identities WHERE provider = $1 AND provider_id = $2 FOR UPDATE`,
		ext.Provider, ext.Subject).Scan(&userID)
	switch {
	case err == nil:
		if _, err := tx.Exec(ctx, `UPDATE auth.identities SET identity_data = $3, last_sign_in_at = now(), updated_at = now()
			WHERE provider = $1 AND provider_id = $2`, ext.Provider, ext.Subject, data); err != nil {
			return nil, fmt.Errorf("update identity: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.users SET raw_user_meta_data = raw_user_meta_data || $2, updated_at = now()
			WHERE id = $1`, userID, data); err != nil {
			return nil, fmt.Errorf("update user metadata: %w", err)
		}
	case errors.Is(err, pgx.ErrNoRows):
		userID, err = linkTarget(ctx, tx, email, ext.EmailVerified)
		if err != nil {
			return nil, err
		}
		if userID == uuid.Nil {
			if !policy.EnableSignup {
				return nil, ErrSignupDisabled
			}
			if userID, err = createUser(ctx, tx, ext.Provider, email, data); err != nil {
				return nil, err
			}
		} else if _, err := tx.Exec(ctx, `UPDATE auth.users SET raw_user_meta_data = raw_user_meta_data || $2, updated_at = now()
			WHERE id = $1`, userID, data); err != nil {
			return nil, fmt.Errorf("update user metadata: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
			VALUES ($1, $2, $3, $4, now())`, ext.Subject, userID, data, ext.Provider); err != nil {
			return nil, fmt.Errorf("create identity: %w", err)
		}
	default:
		return nil, fmt.Errorf("find identity: %w", err)
	}
	if err := updateProviders(ctx, tx, userID); err != nil {
		return nil, err
	}
	user, err := loadUser(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	if user.BannedUntil != nil && user.BannedUntil.After(time.Now()) {
		return nil, ErrUserBanned
	}
	// An unconfirmed account signs in only once the provider vouches for the email it reports (GoTrue sends a
	// confirmation mail at this point; there is no mailer here, so the provider must verify it).
	if user.EmailConfirmedAt == nil && email != "" {
		// Whatever else is attached to an unconfirmed account was never proven to belong to this person (someone
		// may have registered the address first to wait for its owner): only the identity at hand stays, and its
		// data replaces the metadata. This blocks pre-account takeover, as in Supabase Auth.
		if _, err := tx.Exec(ctx, `DELETE FROM auth.identities WHERE user_id = $1 AND NOT (provider = $2 AND provider_id = $3)`,
			userID, ext.Provider, ext.Subject); err != nil {
			return nil, fmt.Errorf("remove unconfirmed identities: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.users SET raw_user_meta_data = $2, updated_at = now() WHERE id = $1`, userID, data); err != nil {
			return nil, fmt.Errorf("reset user metadata: %w", err)
		}
		if err := updateProviders(ctx, tx, userID); err != nil {
			return nil, err
		}
		if user, err = loadUser(ctx, tx, userID); err != nil {
			return nil, err
		}
		if !ext.EmailVerified {
			return user, ErrEmailNeedsVerification
		}
		if user.Email == "" {
			return user, nil // the address belongs to another account; nothing to confirm here
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.users SET email_confirmed_at = now(), updated_at = now() WHERE id = $1`, userID); err != nil {
			return nil, fmt.Errorf("confirm email: %w", err)
		}
		if err := audit(ctx, tx, user, "user_signedup", "team", map[string]any{"provider": ext.Provider}); err != nil {
			return nil, err
		}
		return loadUser(ctx, tx, userID)
	}
	return user, nil
}

// linkTarget returns the user a verified email links a new identity to, or uuid.Nil for a new account.
func linkTarget(ctx context.Context, tx pgx.Tx, email string, verified bool) (uuid.UUID, error) {
	if email == "" || !verified {
		return uuid.Nil, nil
	}
	// Identities of unconfirmed accounts do not count: their email was never verified, and counting them would
	// let anyone make an address ambiguous (and so unusable) by registering it unverified.
	rows, err := tx.Query(ctx, `SELECT DISTINCT i.user_id FROM auth.identities i JOIN auth.users u ON u.id = i.user_id
		WHERE i.email = $1 AND u.email_confirmed_at IS NOT NULL`, email)
	if err != nil {
		return uuid.Nil, fmt.Errorf("find identities by email: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return uuid.Nil, fmt.Errorf("find identities by email: %w", err)
	}
	if len(ids) > 1 {
		return uuid.Nil, ErrMultipleAccounts
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	rows, err = tx.Query(ctx, `SELECT id FROM auth.users WHERE lower(email) = $1 AND NOT is_sso_user`, email)
	if err != nil {
		return uuid.Nil, fmt.Errorf("find users by email: %w", err)
	}
	ids, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return uuid.Nil, fmt.Errorf("find users by email: %w", err)
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	return uuid.Nil, nil
}

func createUser(ctx context.Context, tx pgx.Tx, provider, email string, data map[string]any) (uuid.UUID, error) {
	id := uuid.New()
	appMeta := map[string]any{"provider": provider, "providers": []string{provider}}
	// An address another account already holds (unverified here) is not taken over: the new user gets none.
	var emailArg any
	if email != "" {
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM auth.users WHERE email = $1 AND NOT is_sso_user)`, email).Scan(&taken); err != nil {
			return uuid.Nil, fmt.Errorf("check email: %w", err)
		}
		if !taken {
			emailArg = email
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO auth.users (id, aud, role, email, raw_app_meta_data, raw_user_meta_data)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, DefaultAudience, DefaultRole, emailArg, appMeta, data)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		// A concurrent sign-up took the address between the check and the insert: create without it.
		return uuid.Nil, fmt.Errorf("create user: email taken concurrently: %w", err)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("create user: %w", err)
	}
	return id, nil
}

// updateProviders recomputes app_metadata.providers from the user's identities, keeping app_metadata.provider.
func updateProviders(ctx context.Context, tx pgx.Tx, userID uuid.UUID) error {
	rows, err := tx.Query(ctx, `SELECT DISTINCT provider FROM auth.identities WHERE user_id = $1`, userID)
	if err != nil {
		return fmt.Errorf("read providers: %w", err)
	}
	providers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read providers: %w", err)
	}
	sort.Strings(providers)
	if _, err := tx.Exec(ctx, `UPDATE auth.users SET raw_app_meta_data = jsonb_set(
			CASE WHEN raw_app_meta_data ? 'provider' THEN raw_app_meta_data
			     ELSE raw_app_meta_data || jsonb_build_object('provider', $3::text) END,
			'{providers}', to_jsonb($2::text[]))
		WHERE id = $1`, userID, providers, first(providers)); err != nil {
		return fmt.Errorf("update providers: %w", err)
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// SignIn signs an external identity in and opens a session (ID-token grant). When consumeFlow is not
// uuid.Nil, that implicit-flow state is consumed in the same transaction; if it is already gone the sign-in
// fails with ErrFlowStateNotFound and nothing is written.
func (s *Store) SignIn(ctx context.Context, ext ExternalIdentity, policy SignInPolicy, consumeFlow uuid.UUID) (*Grant, error) {
	var grant *Grant
	var pending error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if consumeFlow != uuid.Nil {
			tag, err := tx.Exec(ctx, `DELETE FROM auth.flow_state WHERE id = $1 AND user_id IS NULL`, consumeFlow)
			if err != nil {
				return fmt.Errorf("consume flow state: %w", err)
			}
			if tag.RowsAffected() == 0 {
				return ErrFlowStateNotFound
			}
		}
		user, err := upsertExternalUser(ctx, tx, ext, policy)
		if errors.Is(err, ErrEmailNeedsVerification) {
			pending = err // the account stays; the sign-in does not happen
			return nil
		}
		if err != nil {
			return err
		}
		sess, token, err := createSession(ctx, tx, user, AMRMethodOAuth)
		if err != nil {
			return err
		}
		user, err = loadUser(ctx, tx, user.ID)
		if err != nil {
			return err
		}
		grant = &Grant{User: user, Session: sess, RefreshToken: token}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, pending
	}
	return grant, nil
}
