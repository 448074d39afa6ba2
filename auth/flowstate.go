package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// FlowState is a row of auth.flow_state: one per OAuth flow started at /authorize. Its id is the OAuth state
// sent to the provider; in the PKCE flow it later carries the user, the auth code and the provider's tokens
// until the code is exchanged.
type FlowState struct {
	ID                  uuid.UUID
	UserID              uuid.UUID // uuid.Nil until the callback
	AuthCode            string
	CodeChallengeMethod string // "s256", "plain", or "" for the implicit flow
	CodeChallenge       string
	ProviderType        string
	Referrer            string
	EmailOptional       bool
	CreatedAt           time.Time
}

// IsPKCE reports whether the flow was started with a code challenge.
func (f *FlowState) IsPKCE() bool { return f.CodeChallenge != "" }

// flowStateRetention bounds how long abandoned flows stay in the table.
const flowStateRetention = 24 * time.Hour

// CreateFlowState stores a new flow. It also clears old ones: rows past retention go, and provider tokens of
// flows past expiry are dropped, so provider tokens live no longer than the flow that carries them.
func (s *Store) CreateFlowState(ctx context.Context, f *FlowState, expiry time.Duration) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM auth.flow_state WHERE created_at < now() - make_interval(secs => $1)`, flowStateRetention.Seconds()); err != nil {
			return fmt.Errorf("clear old flow states: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.flow_state SET provider_access_token = NULL, provider_refresh_token = NULL
			WHERE created_at < now() - make_interval(secs => $1) AND (provider_access_token IS NOT NULL OR provider_refresh_token IS NOT NULL)`,
			expiry.Seconds()); err != nil {
			return fmt.Errorf("clear expired provider tokens: %w", err)
		}
		err := tx.QueryRow(ctx, `INSERT INTO auth.flow_state (id, code_challenge_method, code_challenge, provider_type,
				authentication_method, referrer, email_optional)
			VALUES ($1, nullif($2, ''), nullif($3, ''), $4, $5, nullif($6, ''), $7) RETURNING created_at`,
			f.ID, f.CodeChallengeMethod, f.CodeChallenge, f.ProviderType, AMRMethodOAuth, f.Referrer, f.EmailOptional).Scan(&f.CreatedAt)
		if err != nil {
			return fmt.Errorf("create flow state: %w", err)
		}
		return nil
	})
}

const flowStateColumns = `id, coalesce(user_id, '00000000-0000-0000-0000-000000000000'), coalesce(auth_code, ''),
	coalesce(code_challenge_method, ''), coalesce(code_challenge, ''), provider_type, coalesce(referrer, ''),
	email_optional, created_at`

func scanFlowState(row pgx.Row) (*FlowState, error) {
	f := &FlowState{}
	err := row.Scan(&f.ID, &f.UserID, &f.AuthCode, &f.CodeChallengeMethod, &f.CodeChallenge, &f.ProviderType,
		&f.Referrer, &f.EmailOptional, &f.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrFlowStateNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read flow state: %w", err)
	}
	return f, nil
}

// FlowState loads a flow by its id (the OAuth state).
func (s *Store) FlowState(ctx context.Context, id uuid.UUID) (*FlowState, error) {
	return scanFlowState(s.pool.QueryRow(ctx, `SELECT `+flowStateColumns+` FROM auth.flow_state WHERE id = $1`, id))
}

// ProviderTokens are the provider's own tokens, handed to the client once.
type ProviderTokens struct {
	AccessToken  string
	RefreshToken string
}

// IssueAuthCode completes the callback of a PKCE flow: it signs the identity in (creating or linking the
// account), and stores the user, a new auth code and the provider tokens on the flow. A flow that already has
// a user, or that another callback holds at this moment, yields ErrFlowStateAlreadyUsed.
func (s *Store) IssueAuthCode(ctx context.Context, flowID uuid.UUID, ext ExternalIdentity, policy SignInPolicy, pt ProviderTokens) (string, error) {
	code := uuid.NewString()
	var pending error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		f, err := scanFlowState(tx.QueryRow(ctx, `SELECT `+flowStateColumns+` FROM auth.flow_state WHERE id = $1
			FOR UPDATE SKIP LOCKED`, flowID))
		if errors.Is(err, ErrFlowStateNotFound) {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM auth.flow_state WHERE id = $1)`, flowID).Scan(&exists); err != nil {
				return fmt.Errorf("read flow state: %w", err)
			}
			if exists {
				return ErrFlowStateAlreadyUsed // locked by a concurrent callback
			}
			return ErrFlowStateNotFound
		}
		if err != nil {
			return err
		}
		if f.UserID != uuid.Nil {
			return ErrFlowStateAlreadyUsed
		}
		user, err := upsertExternalUser(ctx, tx, ext, policy)
		if errors.Is(err, ErrEmailNeedsVerification) {
			pending = err
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE auth.flow_state SET user_id = $2, auth_code = $3, provider_access_token = nullif($4, ''),
				provider_refresh_token = nullif($5, ''), auth_code_issued_at = now(), updated_at = now()
			WHERE id = $1`, flowID, user.ID, code, pt.AccessToken, pt.RefreshToken)
		if err != nil {
			return fmt.Errorf("store auth code: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if pending != nil {
		return "", pending
	}
	return code, nil
}

// ExchangeAuthCode swaps a PKCE auth code for a session. verify checks the client's code verifier against the
// stored challenge; a mismatch keeps the flow (the client may retry), success deletes it.
func (s *Store) ExchangeAuthCode(ctx context.Context, code string, expiry time.Duration,
	verify func(method, challenge string) bool) (*Grant, ProviderTokens, error) {
	var grant *Grant
	var pt ProviderTokens
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var access, refresh *string
		f := &FlowState{}
		err := tx.QueryRow(ctx, `SELECT `+flowStateColumns+`, provider_access_token, provider_refresh_token
			FROM auth.flow_state WHERE auth_code = $1 FOR UPDATE`, code).Scan(&f.ID, &f.UserID, &f.AuthCode,
			&f.CodeChallengeMethod, &f.CodeChallenge, &f.ProviderType, &f.Referrer, &f.EmailOptional, &f.CreatedAt,
			&access, &refresh)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && f.UserID == uuid.Nil {
			return ErrFlowStateNotFound
		}
		if err != nil {
			return fmt.Errorf("read flow state: %w", err)
		}
		if time.Since(f.CreatedAt) > expiry {
			return ErrFlowStateExpired
		}
		if !verify(f.CodeChallengeMethod, f.CodeChallenge) {
			return ErrBadCodeVerifier
		}
		user, err := loadUser(ctx, tx, f.UserID)
		if err != nil {
			return err
		}
		if user.BannedUntil != nil && user.BannedUntil.After(time.Now()) {
			return ErrUserBanned
		}
		sess, token, err := createSession(ctx, tx, user, AMRMethodOAuth)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM auth.flow_state WHERE id = $1`, f.ID); err != nil {
			return fmt.Errorf("delete flow state: %w", err)
		}
		if user, err = loadUser(ctx, tx, f.UserID); err != nil {
			return err
		}
		if access != nil {
			pt.AccessToken = *access
		}
		if refresh != nil {
			pt.RefreshToken = *refresh
		}
		grant = &Grant{User: user, Session: sess, RefreshToken: token}
		return nil
	})
	if err != nil {
		return nil, ProviderTokens{}, err
	}
	return grant, pt, nil
}
