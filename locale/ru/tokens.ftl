# Личные API-токены.

tokens-title = API-токены
tokens-intro = Программы обращаются к шлюзу, передавая один из этих токенов как токен доступа. Токен наследует ваш приоритет, если вы не назначите ему другой.
tokens-empty = У вас пока нет токенов.
tokens-create = Создать токен
tokens-list-label = Ваши токены
tokens-owner-priority = Ваш унаследованный приоритет: { $priority }
tokens-max-priority = Наивысший доступный вам приоритет: { $priority }
tokens-priority-disabled = Приоритизация запросов сейчас отключена. Ваш выбор вступит в силу, когда администратор её включит.

token-prefix = Начинается с
token-created = Создан
token-last-used = Последнее использование
token-expires = Истекает
token-status-active = Активен
token-status-revoked = Отозван
token-status-expired = Истёк
token-priority-saved = Приоритет сохранён.
token-actions = Действия для { $name }
token-revoke = Отозвать
token-rotate = Перевыпустить
token-delete = Удалить
token-revoke-confirm = Отозвать «{ $name }»? Программы, которые его используют, сразу перестанут работать.
token-rotate-confirm = Перевыпустить «{ $name }»? Текущий секрет перестанет действовать, а новый будет показан один раз.
token-delete-confirm = Удалить «{ $name }» навсегда?
token-revoked = Токен «{ $name }» отозван.
token-deleted = Токен «{ $name }» удалён.
token-revoked-by = Отозван пользователем { $name }: { $date }.
token-revoked-on = Отозван: { $date }.

create-title = Создание токена
create-name = Название
create-name-hint = Например, программа или компьютер, который будет его использовать.
create-priority-hint = «Наследовать» следует за вашими группами. Для фоновых задач выберите приоритет пониже.
create-submit = Создать токен

secret-title = Скопируйте токен сейчас
secret-once = Токен показывается только один раз. Сохраните его в надёжном месте.
secret-label = Новый токен
secret-copy = Копировать
secret-copied = Скопировано в буфер обмена.
secret-copy-failed = Не удалось скопировать. Выделите токен и скопируйте его вручную.
secret-done = Готово
