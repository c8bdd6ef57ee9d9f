# Макет, навигация, общие кнопки и слова, названия языков.

product-name = aiplane
product-tagline = Шлюз для LLM
page-title = { $page } · aiplane
skip-to-content = Перейти к содержимому
nav-label = Основная навигация
nav-menu = Меню
nav-tokens = Токены
nav-playground = Песочница
nav-admin = Администрирование
nav-admin-settings = Настройки
nav-admin-groups = Группы
nav-admin-users = Пользователи
nav-admin-tokens = Токены
nav-admin-backends = Серверы моделей
nav-admin-queue = Очередь
nav-admin-activity = Активность

language-label = Язык
language-name-en = Английский
language-name-de = Немецкий
language-name-fr = Французский
language-name-es = Испанский
language-name-ru = Русский
language-name-zh = Китайский
signed-in-as = Вы вошли как { $username }
sign-out = Выйти

action-save = Сохранить
action-cancel = Отмена
action-close = Закрыть
action-create = Создать
action-delete = Удалить
action-dismiss = Скрыть
action-edit = Изменить
column-actions = Действия
status-loading = Загрузка…
status-saving = Сохранение…
status-saved = Сохранено.
value-never = Никогда
value-none = —
value-yes = Да
value-no = Нет
value-on = Вкл.
value-off = Выкл.
value-not-reported = Не сообщается
duration-seconds = { $seconds } с
duration-minutes = { $minutes } мин { $seconds } с
duration-hours = { $hours } ч { $minutes } мин
duration-ms = { $ms } мс

priority-label = Приоритет
priority-inherit = Наследовать
priority-inherit-with = Наследовать ({ $priority })
priority-low = Низкий
priority-medium = Средний
priority-high = Высокий

shell-pending = Элементы управления этой страницы пока недоступны.

forbidden-title = Доступ запрещён
forbidden-body = Эта страница предназначена для администраторов. Если вам нужен доступ, обратитесь к администратору.
not-found-title = Страница не найдена
not-found-body = По этому адресу нет страницы.
back-home = Вернуться к вашим токенам
