# Администрирование: настройки, группы, пользователи, все токены.

admin-settings-title = Настройки
admin-settings-intro = Настройки работы: приоритизация запросов, приоритет системы по умолчанию и то, сколько запрос может ждать свободных ресурсов.
admin-groups-title = Группы
admin-groups-intro = Группы шлюза определяют, кто администрирует aiplane и какой приоритет у их участников; какими моделями они могут пользоваться, задаётся в каждом пуле (Серверы моделей → Пулы).
admin-users-title = Пользователи
admin-users-intro = Локальные учётные записи, с которыми можно войти в aiplane.
admin-tokens-title = Все токены
admin-tokens-intro = Каждый API-токен с владельцем и приоритетом.

## Настройки

settings-section-access-gateway = Доступ › Шлюз
settings-section-access-gateway-intro = Приоритизация запросов и очередь, которая упорядочивает их, пока все серверы заняты.
settings-section-observability = Наблюдаемость
settings-section-observability-intro = Сколько хранятся записи активности по каждому запросу.
settings-save = Сохранить настройки
settings-save-hint = Все значения сохраняются вместе; если одно из них недопустимо, ничего не меняется.
settings-saved = Настройки сохранены.
setting-default = По умолчанию: { $value }.
setting-error = { $setting }: { $message }
setting-error-range = { $setting }: нужно целое число от { $min } до { $max }.

setting-gateway-priority-enabled = Включить приоритизацию запросов
setting-gateway-priority-enabled-hint = Когда выключено, все запросы относятся к одному классу и обслуживаются в порядке поступления.
setting-gateway-priority-default = Приоритет системы по умолчанию
setting-gateway-priority-default-hint = Приоритет тех, чьи группы его не задают.
setting-gateway-upstream-wait-secs = Время ожидания (секунды)
setting-gateway-upstream-wait-secs-hint = Сколько запрос может ждать свободного сервера, прежде чем завершится ошибкой «нет ресурсов». При 0 одна попытка всё равно делается.
setting-gateway-scheduler = Планировщик
setting-gateway-scheduler-hint = Строгий: высокий раньше среднего, средний раньше низкого, внутри класса — по порядку поступления. С баллами: учитывает ещё время ожидания и привязку к кешу. По порядку поступления: приоритет даёт фору. Кратчайший взвешенный запрос: сначала короткие запросы с учётом приоритета. Сначала ближайший срок: внутри класса первым идёт запрос, попросивший ждать меньше (X-AIplane-Max-Wait).
setting-gateway-scheduler-strict = Строгий приоритет
setting-gateway-scheduler-serial = С баллами (ожидание, привязка)
setting-gateway-scheduler-fcfs = По порядку поступления
setting-gateway-scheduler-wspt = Кратчайший взвешенный запрос
setting-gateway-scheduler-edf = Сначала ближайший срок
setting-gateway-aging-divisor-secs = Делитель старения (секунды)
setting-gateway-aging-divisor-secs-hint = Планировщик с баллами: ожидание такой длительности добавляет запросу один балл. 0 отключает старение.
setting-gateway-affinity-bonus = Бонус за привязку к кешу
setting-gateway-affinity-bonus-hint = Планировщик с баллами: баллы запросу, у чьего сервера с прогретым кешем есть свободное место (от 0 до 99).
setting-gateway-max-waiters = Максимум ожидающих запросов
setting-gateway-max-waiters-hint = Сверх этого числа новые запросы сразу отклоняются с кодом 429. 0 — без ограничения.
setting-gateway-fair-share = Справедливое распределение внутри класса
setting-gateway-fair-share-hint = Строгий планировщик: внутри класса пользователи обслуживаются по очереди, чтобы множество запросов одного не вытесняло запросы остальных.
setting-gateway-fair-share-by = Справедливое распределение считает
setting-gateway-fair-share-by-hint = Запросы: каждый запрос — одна очередь хода. Токены: людей обслуживают по израсходованным токенам (запрос плюс удвоенный вывод, как сообщает движок), чтобы длинные запросы одного не вытесняли короткие запросы других.
setting-gateway-fair-share-by-requests = Запросы
setting-gateway-fair-share-by-tokens = Токены
setting-gateway-fair-share-half-life-secs = Справедливое распределение забывает через (период полураспада, секунды)
setting-gateway-fair-share-half-life-secs-hint = По токенам: то, что человек израсходовал сверх других, уменьшается вдвое каждые столько секунд. 0 — никогда не забывать.
setting-gateway-headroom-secs = Резерв действует (секунды)
setting-gateway-headroom-secs-hint = Резерв бэкенда не отдаёт его последние места классу, пока за это время приходил запрос более высокого класса; если давно не приходил, любой класс может занять все места.
setting-gateway-preemption = Вытеснять низшие классы на этапе prefill
setting-gateway-preemption-hint = Запрос более высокого класса, которому приходится ждать бэкенд, прерывает там поток низшего класса, ещё не отправивший первое событие (движок ещё читает промпт): тот возвращается в начало своего класса и ждёт снова, а его клиент видит лишь более долгое ожидание. Каждый запрос прерывается не более одного раза; целые (не потоковые) ответы — никогда.
setting-gateway-connect-timeout-secs = Тайм-аут подключения (секунды)
setting-gateway-connect-timeout-secs-hint = Сколько ждать, пока сервер моделей примет соединение, прежде чем попробовать другую реплику.
setting-gateway-first-byte-timeout-secs = Время до первого байта (секунды)
setting-gateway-first-byte-timeout-secs-hint = Сколько сервер моделей может начинать ответ (префилл длинного промпта занимает время, поэтому не скупитесь); после этого запрос завершается ошибкой 504.
setting-gateway-idle-timeout-secs = Тайм-аут простоя между частями (секунды)
setting-gateway-idle-timeout-secs-hint = Сколько начатый ответ может молчать между двумя частями; после этого он завершается ошибкой, а слот освобождается.
setting-gateway-media-urls = Какие URL медиа могут загружать движки
setting-gateway-media-urls-hint = Движки сами загружают URL изображений, аудио и видео из запроса — изнутри вашей сети. «Только публичные» отклоняет (400) file: и другие схемы, а также хосты, являющиеся loopback-, частными, link-local-адресами или адресами и именами облачных метаданных; URL data: проходят всегда. Имена хостов не разрешаются: ограничьте исходящий трафик движков межсетевым экраном.
setting-gateway-media-urls-public = Только публичные хосты и URL data:
setting-gateway-media-urls-any = Любой URL (движки загружают то, что присылают клиенты)
setting-activity-retention-days = Хранить активность (дни)
setting-activity-retention-days-hint = Более старые записи удаляются каждый час.

## Группы

groups-caption = Группы шлюза
groups-empty = Групп пока нет.
group-new = Новая группа
group-new-title = Новая группа
group-edit-title = Изменить группу «{ $name }»
group-name = Название
group-name-hint = Буквы, цифры, точки, подчёркивания или дефисы. При переименовании все ссылки на него сохраняются.
group-description = Описание
group-roles = Роли
group-members = Участники
group-members-filter = Фильтр пользователей
group-members-none = Пользователей пока нет.
group-members-everyone = Все (группа по умолчанию)
group-members-nobody = Нет участников
group-priority-hint = Участники наследуют наивысший приоритет из всех своих групп. «Не задан» оставляет выбор другим группам или значению системы по умолчанию.
group-priority-none = Не задан
group-priority-of = Приоритет группы { $name }
group-priority-saved = Приоритет группы «{ $name }» сохранён.
group-is-admin = Администраторы
group-is-admin-hint = Участники могут администрировать aiplane.
group-is-default = Группа по умолчанию
group-is-default-hint = В неё входят все пользователи, даже не будучи перечисленными.
group-badge-admin = Администраторы
group-badge-default = По умолчанию
group-actions = Действия с группой { $name }
group-delete-confirm = Удалить группу «{ $name }»? Её участники потеряют то, что она им давала.
group-deleted = Группа «{ $name }» удалена.
group-saved = Группа «{ $name }» сохранена.
group-created = Группа «{ $name }» создана.

## Пользователи

users-caption = Локальные учётные записи
user-new = Новый пользователь
user-new-title = Новый пользователь
user-edit-title = Изменить пользователя «{ $name }»
user-create = Создать пользователя
user-username = Имя пользователя
user-username-hint = Только буквы, цифры и @ . + - _.
user-email = Электронная почта
user-password = Пароль
user-password-hint = Без пароля войти в учётную запись нельзя, пока он не будет задан.
user-new-password = Новый пароль
user-new-password-hint = Оставьте пустым, чтобы сохранить текущий пароль.
user-active = Активна
user-active-hint = С неактивной учётной записью войти нельзя, а её токены перестают работать.
user-status = Состояние
user-groups = Группы
user-last-login = Последний вход
user-badge-active = Активна
user-badge-inactive = Неактивна
user-badge-admin = Администратор
user-is-you = Это вы
user-actions = Действия с пользователем { $name }
user-delete-confirm = Удалить учётную запись «{ $name }» и все её токены?
user-deleted = Пользователь «{ $name }» удалён.
user-saved = Пользователь «{ $name }» сохранён.
user-created = Пользователь «{ $name }» создан.

## Все токены

admin-tokens-caption = Все API-токены
admin-tokens-empty = Пока никто не создал ни одного токена.
admin-tokens-filter = Фильтр по токену или владельцу
admin-tokens-count = Показано { $shown } из { $total } токенов
admin-tokens-priority-disabled = Приоритизация запросов выключена: этот выбор подействует, когда её включат в настройках.
admin-token-name = Токен
admin-token-owner = Владелец
admin-token-state = Состояние
admin-token-effective = Действует
admin-token-priority-of = Приоритет токена { $name } пользователя { $owner }
admin-token-inherits = Наследует приоритет «{ $priority }» от групп владельца.
admin-token-set-by-admin = Задал { $name } (администратор).
admin-token-set-by-owner = Задал { $name } (владелец).
admin-token-actions = Действия с токеном { $name } пользователя { $owner }
admin-token-revoke-confirm = Отозвать «{ $name }» пользователя { $owner }? Программы, которые его используют, сразу перестанут работать, а { $owner } увидит, что токен отозвали вы.
admin-token-delete-confirm = Удалить «{ $name }» пользователя { $owner } навсегда? Программы, которые его используют, сразу перестанут работать.
admin-token-revoked = Токен «{ $name }» пользователя { $owner } отозван.
admin-token-deleted = Токен «{ $name }» пользователя { $owner } удалён.
