from oauth2_provider.oauth2_validators import OAuth2Validator


class LatchkeyTestValidator(OAuth2Validator):
    """Adds the standard profile/email claims (filtered by granted scope via
    DOT's oidc_claim_scope) to the ID token and the userinfo response."""

    def get_additional_claims(self):
        return {
            "name": lambda r: r.user.get_full_name() or r.user.username,
            "given_name": lambda r: r.user.first_name or r.user.username,
            "preferred_username": lambda r: r.user.username,
            "email": lambda r: r.user.email,
            "email_verified": lambda r: True,
        }
