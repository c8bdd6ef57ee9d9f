# Sign-in and sign-out.

login-title = Sign in
login-intro = Sign in with your aiplane account.
login-username = Username
login-password = Password
login-submit = Sign in
login-failed = The username or password is wrong, or the account is disabled.
login-missing = Enter your username and password.
login-signed-out = You have been signed out.
login-too-many = { $minutes ->
    [one] Too many failed sign-in attempts. Try again in a minute.
   *[other] Too many failed sign-in attempts. Try again in { $minutes } minutes.
}
