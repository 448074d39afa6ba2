package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store keeps users, identities, sessions, refresh tokens, OAuth flow state and the audit log in schema auth.
// Every operation that changes more than one row runs in one transaction, so several server instances can
// share the database.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a store on pool; call Migrate first.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Errors of the store; the HTTP layer maps each to its wire error.
var (
	ErrUserNotFound            = errors.New("user not found")
	ErrSessionNotFound         = errors.New("session not found")
	ErrSignupDisabled          = errors.New("signups not allowed for this instance")
	ErrEmailNeedsVerification  = errors.New("unverified email with external provider")
	ErrMultipleAccounts        = errors.New("multiple accounts with the same email address in the same linking domain detected")
	ErrRefreshTokenNotFound    = errors.New("refresh token not found")
	ErrRefreshTokenAlreadyUsed = errors.New("refresh token already used")
	ErrFlowStateNotFound       = errors.New("flow state not found")
	ErrFlowStateExpired        = errors.New("flow state expired")
	ErrFlowStateAlreadyUsed    = errors.New("flow state already used")
	ErrBadCodeVerifier         = errors.New("code challenge does not match previously saved code verifier")
	ErrUserBanned              = errors.New("user is banned")
)

// User is a row of auth.users in the JSON shape of Supabase Auth's user object.
type User struct {
	ID               uuid.UUID      `json:"id"`
	Aud              string         `json:"aud"`
	Role             string         `json:"role"`
	Email            string         `json:"email"`
	EmailConfirmedAt *time.Time     `json:"email_confirmed_at,omitempty"`
	Phone            string         `json:"phone"`
	PhoneConfirmedAt *time.Time     `json:"phone_confirmed_at,omitempty"`
	ConfirmedAt      *time.Time     `json:"confirmed_at,omitempty"`
	LastSignInAt     *time.Time     `json:"last_sign_in_at,omitempty"`
	AppMetadata      map[string]any `json:"app_metadata"`
	UserMetadata     map[string]any `json:"user_metadata"`
	Identities       []Identity     `json:"identities"`
	CreatedAt        time.Time      `json:"created_at"`
	UpdatedAt        time.Time      `json:"updated_at"`
	BannedUntil      *time.Time     `json:"banned_until,omitempty"`
	IsAnonymous      bool           `json:"is_anonymous"`
}

// Identity is a row of auth.identities. As in Supabase Auth, "id" carries the provider's subject and
// "identity_id" the row's own id.
type Identity struct {
	IdentityID   uuid.UUID      `json:"identity_id"`
	ProviderID   string         `json:"id"`
	UserID       uuid.UUID      `json:"user_id"`
	IdentityData map[string]any `json:"identity_data,omitempty"`
	Provider     string         `json:"provider"`
	LastSignInAt *time.Time     `json:"last_sign_in_at,omitempty"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	Email        string         `json:"email,omitempty"`
}

// AMREntry is one authentication method of a session, newest first in a token's amr claim.
type AMREntry struct {
	Method    string `json:"method"`
	Timestamp int64  `json:"timestamp"`
}

// Session is a row of auth.sessions with its authentication methods.
type Session struct {
	ID     uuid.UUID
	UserID uuid.UUID
	AAL    string
	AMR    []AMREntry
}

// querier is what both a pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const userColumns = `id, coalesce(aud, ''), coalesce(role, ''), coalesce(email, ''), email_confirmed_at,
	coalesce(phone, ''), phone_confirmed_at, confirmed_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data,
	created_at, updated_at, banned_until, is_anonymous`

func scanUser(row pgx.Row) (*User, error) {
	u := &User{}
	err := row.Scan(&u.ID, &u.Aud, &u.Role, &u.Email, &u.EmailConfirmedAt, &u.Phone, &u.PhoneConfirmedAt,
		&u.ConfirmedAt, &u.LastSignInAt, &u.AppMetadata, &u.UserMetadata, &u.CreatedAt, &u.UpdatedAt,
		&u.BannedUntil, &u.IsAnonymous)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	if u.AppMetadata == nil {
		u.AppMetadata = map[string]any{}
	}
	if u.UserMetadata == nil {
		u.UserMetadata = map[string]any{}
	}
	return u, nil
}

// User loads a user with its identities.
func (s *Store) User(ctx context.Context, id uuid.UUID) (*User, error) {
	return loadUser(ctx, s.pool, id)
}

func loadUser(ctx context.Context, q querier, id uuid.UUID) (*User, error) {
	u, err := scanUser(q.QueryRow(ctx, `SELECT `+userColumns+` FROM auth.users WHERE id = $1`, id))
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, `SELECT `+identityColumns+` FROM auth.identities WHERE user_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		return nil, fmt.Errorf("read identities: %w", err)
	}
	u.Identities, err = pgx.CollectRows(rows, scanIdentity)
	if err != nil {
		return nil, fmt.Errorf("read identities: %w", err)
	}
	if u.Identities == nil {
		u.Identities = []Identity{}
	}
	return u, nil
}

const identityColumns = `id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at,
	updated_at, coalesce(email, '')`

func scanIdentity(r pgx.CollectableRow) (Identity, error) {
	var i Identity
	err := r.Scan(&i.IdentityID, &i.ProviderID, &i.UserID, &i.IdentityData, &i.Provider, &i.LastSignInAt,
		&i.CreatedAt, &i.UpdatedAt, &i.Email)
	return i, err
}

// Session loads a session with its authentication methods.
func (s *Store) Session(ctx context.Context, id uuid.UUID) (*Session, error) {
	return loadSession(ctx, s.pool, id)
}

func loadSession(ctx context.Context, q querier, id uuid.UUID) (*Session, error) {
	sess := &Session{ID: id}
	err := q.QueryRow(ctx, `SELECT user_id, aal FROM auth.sessions WHERE id = $1`, id).Scan(&sess.UserID, &sess.AAL)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	rows, err := q.Query(ctx, `SELECT authentication_method, extract(epoch FROM updated_at)::bigint
		FROM auth.mfa_amr_claims WHERE session_id = $1 ORDER BY updated_at DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("read amr claims: %w", err)
	}
	sess.AMR, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (AMREntry, error) {
		var e AMREntry
		err := r.Scan(&e.Method, &e.Timestamp)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read amr claims: %w", err)
	}
	return sess, nil
}

// Audit writes an audit_log_entries row (payload as Supabase Auth writes it).
func audit(ctx context.Context, q querier, actor *User, action, logType string, traits map[string]any) error {
	payload := map[string]any{"action": action, "log_type": logType}
	if actor != nil {
		payload["actor_id"] = actor.ID.String()
		payload["actor_username"] = actor.Email
	}
	if traits != nil {
		payload["traits"] = traits
	}
	_, err := q.Exec(ctx, `INSERT INTO auth.audit_log_entries (id, payload) VALUES ($1, $2)`, uuid.New(), payload)
	if err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}

// refreshTokenAlphabet is lower-case base32, as Supabase Auth's legacy 12-character refresh tokens.
const refreshTokenAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

func newRefreshToken() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	for i := range b {
		b[i] = refreshTokenAlphabet[int(b[i])%len(refreshTokenAlphabet)]
	}
	return string(b), nil
}

// ValidRefreshTokenFormat reports whether a token has the shape of a legacy refresh token.
func ValidRefreshTokenFormat(token string) bool {
	if len(token) != 12 {
		return false
	}
	for _, c := range token {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// createSession opens a session for a user signed in by method and returns it with its first refresh token.
func createSession(ctx context.Context, q querier, user *User, method string) (*Session, string, error) {
	id := uuid.New()
	if _, err := q.Exec(ctx, `INSERT INTO auth.sessions (id, user_id, aal) VALUES ($1, $2, 'aal1')`, id, user.ID); err != nil {
		return nil, "", fmt.Errorf("create session: %w", err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO auth.mfa_amr_claims (session_id, authentication_method) VALUES ($1, $2)`,
		id, method); err != nil {
		return nil, "", fmt.Errorf("create amr claim: %w", err)
	}
	token, err := insertRefreshToken(ctx, q, user.ID, id, "")
	if err != nil {
		return nil, "", err
	}
	if _, err := q.Exec(ctx, `UPDATE auth.users SET last_sign_in_at = now(), updated_at = now() WHERE id = $1`, user.ID); err != nil {
		return nil, "", fmt.Errorf("update last sign-in: %w", err)
	}
	if err := audit(ctx, q, user, "login", "account", map[string]any{"provider": user.AppMetadata["provider"]}); err != nil {
		return nil, "", err
	}
	sess, err := loadSession(ctx, q, id)
	return sess, token, err
}

func insertRefreshToken(ctx context.Context, q querier, userID, sessionID uuid.UUID, parent string) (string, error) {
	token, err := newRefreshToken()
	if err != nil {
		return "", err
	}
	var parentArg any
	if parent != "" {
		parentArg = parent
	}
	if _, err := q.Exec(ctx, `INSERT INTO auth.refresh_tokens (token, user_id, session_id, parent) VALUES ($1, $2, $3, $4)`,
		token, userID.String(), sessionID, parentArg); err != nil {
		return "", fmt.Errorf("create refresh token: %w", err)
	}
	return token, nil
}

// Grant is the outcome of a sign-in or refresh: the user, the session and the refresh token to hand out.
type Grant struct {
	User         *User
	Session      *Session
	RefreshToken string
}

// RefreshPolicy is the refresh-token rotation configuration.
type RefreshPolicy struct {
	Rotation      bool
	ReuseInterval time.Duration
}

// Refresh swaps a refresh token for a new one (legacy algorithm of Supabase Auth):
//   - a live token is revoked and a child issued;
//   - a revoked token that is the parent of the session's live token returns that live token (the client
//     failed to save the last answer);
//   - a revoked token within the reuse interval of its revocation gets a new child;
//   - any other revoked token, with rotation on, ends the whole session (every token of the family and the
//     access tokens bound to it) and yields ErrRefreshTokenAlreadyUsed.
func (s *Store) Refresh(ctx context.Context, token string, policy RefreshPolicy) (*Grant, error) {
	var grant *Grant
	var reuseErr error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			sessionID uuid.UUID
			revoked   bool
			revokedAt time.Time
		)
		err := tx.QueryRow(ctx, `SELECT session_id FROM auth.refresh_tokens WHERE token = $1`, token).Scan(&sessionID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrRefreshTokenNotFound
		}
		if err != nil {
			return fmt.Errorf("read refresh token: %w", err)
		}
		// Serialise refreshes of one session so that two concurrent refreshes of the same token cannot both
		// rotate it.
		var userID uuid.UUID
		err = tx.QueryRow(ctx, `SELECT user_id FROM auth.sessions WHERE id = $1 FOR UPDATE`, sessionID).Scan(&userID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrSessionNotFound
		}
		if err != nil {
			return fmt.Errorf("lock session: %w", err)
		}
		err = tx.QueryRow(ctx, `SELECT revoked, updated_at FROM auth.refresh_tokens WHERE token = $1`, token).Scan(&revoked, &revokedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrRefreshTokenNotFound
		}
		if err != nil {
			return fmt.Errorf("read refresh token: %w", err)
		}
		user, err := loadUser(ctx, tx, userID)
		if err != nil {
			return err
		}
		if user.BannedUntil != nil && user.BannedUntil.After(time.Now()) {
			return ErrUserBanned
		}
		issued := ""
		if revoked {
			var active, activeParent string
			err := tx.QueryRow(ctx, `SELECT token, coalesce(parent, '') FROM auth.refresh_tokens
				WHERE session_id = $1 AND NOT revoked ORDER BY id DESC LIMIT 1`, sessionID).Scan(&active, &activeParent)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("read active refresh token: %w", err)
			}
			switch {
			case active != "" && activeParent == token:
				issued = active
			case policy.Rotation && time.Now().After(revokedAt.Add(policy.ReuseInterval)):
				if _, err := tx.Exec(ctx, `DELETE FROM auth.sessions WHERE id = $1`, sessionID); err != nil {
					return fmt.Errorf("revoke token family: %w", err)
				}
				if err := audit(ctx, tx, user, "token_revoked", "token", map[string]any{"reason": "refresh token reuse"}); err != nil {
					return err
				}
				reuseErr = ErrRefreshTokenAlreadyUsed
				return nil // commit the revocation, then report
			}
		}
		if issued == "" {
			if _, err := tx.Exec(ctx, `UPDATE auth.refresh_tokens SET revoked = true, updated_at = now()
				WHERE token = $1 AND NOT revoked`, token); err != nil {
				return fmt.Errorf("revoke refresh token: %w", err)
			}
			issued, err = insertRefreshToken(ctx, tx, userID, sessionID, token)
			if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.sessions SET refreshed_at = now()::timestamp, updated_at = now() WHERE id = $1`, sessionID); err != nil {
			return fmt.Errorf("touch session: %w", err)
		}
		if err := audit(ctx, tx, user, "token_refreshed", "token", nil); err != nil {
			return err
		}
		sess, err := loadSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		grant = &Grant{User: user, Session: sess, RefreshToken: issued}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if reuseErr != nil {
		return nil, reuseErr
	}
	return grant, nil
}

// LogoutScope says which sessions a logout ends.
type LogoutScope string

// Logout scopes of POST /logout.
const (
	LogoutGlobal LogoutScope = "global"
	LogoutLocal  LogoutScope = "local"
	LogoutOthers LogoutScope = "others"
)

// Logout ends sessions of a user relative to the current one; their refresh tokens go with them.
func (s *Store) Logout(ctx context.Context, user *User, sessionID uuid.UUID, scope LogoutScope) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		switch scope {
		case LogoutLocal:
			_, err = tx.Exec(ctx, `DELETE FROM auth.sessions WHERE id = $1 AND user_id = $2`, sessionID, user.ID)
		case LogoutOthers:
			_, err = tx.Exec(ctx, `DELETE FROM auth.sessions WHERE user_id = $1 AND id <> $2`, user.ID, sessionID)
		default:
			_, err = tx.Exec(ctx, `DELETE FROM auth.sessions WHERE user_id = $1`, user.ID)
		}
		if err != nil {
			return fmt.Errorf("delete sessions: %w", err)
		}
		return audit(ctx, tx, user, "logout", "account", map[string]any{"scope": string(scope)})
	})
}

// normalizeEmail lower-cases an address as Supabase Auth stores it.
func normalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// Users loads one page of users, newest first as Supabase Auth lists them, with their identities, and the
// number of users in all.
func (s *Store) Users(ctx context.Context, offset, limit int) ([]*User, int, error) {
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM auth.users`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count users: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+userColumns+` FROM auth.users ORDER BY created_at DESC, id
		OFFSET $1 LIMIT $2`, offset, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*User, error) { return scanUser(r) })
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[uuid.UUID]*User, len(users))
	ids := make([]uuid.UUID, len(users))
	for i, u := range users {
		u.Identities = []Identity{}
		byID[u.ID] = u
		ids[i] = u.ID
	}
	rows, err = s.pool.Query(ctx, `SELECT `+identityColumns+` FROM auth.identities WHERE user_id = any($1)
		ORDER BY created_at, id`, ids)
	if err != nil {
		return nil, 0, fmt.Errorf("read identities: %w", err)
	}
	identities, err := pgx.CollectRows(rows, scanIdentity)
	if err != nil {
		return nil, 0, fmt.Errorf("read identities: %w", err)
	}
	for _, i := range identities {
		byID[i.UserID].Identities = append(byID[i.UserID].Identities, i)
	}
	return users, total, nil
}
