# Администрирование: настройки, группы, пользователи, все токены.

admin-settings-title = Настройки
admin-settings-intro = Настройки работы: приоритизация запросов, приоритет системы по умолчанию и то, сколько запрос может ждать свободных ресурсов.
admin-groups-title = Группы
admin-groups-intro = Группы шлюза определяют, кто может пользоваться какими моделями, кто администрирует aiplane и какой приоритет у их участников.
admin-users-title = Пользователи
admin-users-intro = Локальные учётные записи, с которыми можно войти в aiplane.
admin-tokens-title = Все токены
admin-tokens-intro = Каждый API-токен с владельцем и приоритетом.

admin-section-access = Доступ
admin-section-gateway = Шлюз
setting-priority-enabled = Включить приоритизацию запросов
setting-priority-default = Приоритет системы по умолчанию
setting-upstream-wait = Время ожидания в секундах
