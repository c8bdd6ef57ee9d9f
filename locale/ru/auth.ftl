# Вход и выход.

login-title = Вход
login-intro = Войдите с помощью своей учётной записи aiplane.
login-username = Имя пользователя
login-password = Пароль
login-submit = Войти
login-failed = Неверное имя пользователя или пароль, либо учётная запись отключена.
login-missing = Введите имя пользователя и пароль.
login-signed-out = Вы вышли из системы.
